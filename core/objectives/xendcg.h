#ifndef PLRANK_CORE_OBJECTIVES_XENDCG_H_
#define PLRANK_CORE_OBJECTIVES_XENDCG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/objectives/objective.h"
#include "core/objectives/query_objective.h"
#include "core/objectives/registry.h"

namespace plrank {

// XE-NDCG ("xendcg"): LightGBM's rank_xendcg (Bruch et al., "An Alternative
// Cross Entropy Loss for Learning-to-Rank", WWW 2019), kept as a point of
// comparison for the Plackett-Luce objective. Per query, with
// rho = softmax(s) and phi_i = 2^{label_i} - gamma_i, gamma_i ~ U[0, 1)
// redrawn every boosting iteration, the loss is the cross entropy
//   L = -sum_i (phi_i / sum phi) log rho_i.
// Its exact gradient rho_i - phi_i / sum phi is corrected as LightGBM does,
// by the second- and third-order terms of its approximation of the inverse
// Hessian (see QueryGradients); the hessian is the diagonal rho_i (1 - rho_i)
// and leaves take the default diagonal Newton step.
//
// Queries with at most one document or whose labels are all 0 are skipped
// (g = h = 0, loss 0): they carry no ranking signal, and without the skip
// phi = 1 - gamma would pull the scores towards pure noise. (LightGBM itself
// skips only queries of <= 1 document; its first version tested sum phi == 0,
// which never happens.)
//
// Randomness: the gammas of (iteration, query) come from their own SplitMix64
// stream seeded by a hash of (Init's seed, iteration, query), so they do not
// depend on the thread count, on bagging or on the order queries are visited.
// The iteration is the number of earlier ComputeGradients calls (the booster
// calls it once per iteration).
class XendcgObjective : public QueryObjective {
 public:
  std::string name() const override { return "xendcg"; }
  // Draws this iteration's gammas (see above), then the base's loop.
  void ComputeGradients(absl::Span<const double> scores,
                        absl::Span<const uint8_t> query_in_bag,
                        absl::Span<float> gradients,
                        absl::Span<float> hessians) override;
  // Query q's derivatives with the gammas of the running ComputeGradients.
  void QueryDerivatives(size_t q, const double* scores, double* gradients,
                        double* hessians, QueryScratch& scratch) const override;
  // The cross entropy with the gammas' mean, gamma = 0.5, in place of a draw:
  // deterministic, so that it can be logged and differentiated, and its
  // gradient is the expected first-order part of ComputeGradients up to the
  // (small) nonlinearity of the normalization by sum phi.
  double QueryLoss(size_t q, const double* scores,
                   QueryScratch& scratch) const override;
  std::vector<std::string> Describe() const override;

  // One query's derivatives for given (unnormalized, positive) phi: the
  // LightGBM-style gradient and rho (1 - rho). `work` must hold at least
  // 2 * scores.size() values. With corrections = false the gradient is only
  // the first-order part rho - phi / sum phi, the exact gradient of the cross
  // entropy. The testing hook for fixed gammas, and the kernel of
  // ComputeGradients.
  static void QueryGradients(absl::Span<const double> scores,
                             absl::Span<const double> phi,
                             absl::Span<double> gradients,
                             absl::Span<double> hessians,
                             absl::Span<double> work, bool corrections = true);

  // phi_i = 2^{label_i} - gamma_i of query q at boosting iteration
  // `iteration` (0-based), exactly as ComputeGradients draws them.
  void DrawPhi(size_t q, uint64_t iteration, absl::Span<double> phi) const;

  // Whether query q is skipped (<= 1 document or all labels 0).
  bool Skipped(size_t q) const { return skip_[q] != 0; }

  // Number of ComputeGradients calls so far.
  uint64_t iteration() const { return iteration_; }

  // Resuming: the next ComputeGradients draws iteration `iteration`'s phi.
  void StartAtIteration(int32_t iteration) override { iteration_ = iteration; }

 protected:
  absl::Status InitQueries(const Dataset& train, uint64_t seed) override;

 private:
  std::vector<uint8_t> skip_;  // per query
  int32_t skipped_queries_ = 0;
  uint64_t seed_ = 0;
  uint64_t query_index_base_ = 0;  // Dataset::query_index_base
  uint64_t iteration_ = 0;
  uint64_t drawing_iteration_ = 0;  // of the ComputeGradients call running
};

// The registry's factory for "xendcg" (which has no options), kept here so
// that registering the loss takes a single line in registry.cc.
absl::StatusOr<std::unique_ptr<Objective>> MakeXendcg(
    const ObjectiveOptions& options);

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_XENDCG_H_
