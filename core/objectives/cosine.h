#ifndef PLRANK_CORE_OBJECTIVES_COSINE_H_
#define PLRANK_CORE_OBJECTIVES_COSINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/objectives/objective.h"
#include "core/objectives/query_objective.h"

namespace plrank {

// CosMART ("cosmart") and c-CosMART ("ccosmart"): per query
//   L = 1 - <s, t> / ||s||,  t = G / ||G|| (cosmart) or G / Z (ccosmart),
// G = 2^r - 1, Z = the query's whole-list ideal DCG. With n = ||s||,
// c = <s, t>:
//   g_i = -t_i / n + c s_i / n^3                       (exact)
//   h_i = ||t|| / n^2                                  (approximation)
// h is the diagonal of the true Hessian at the optimum s || t, which is
// (||t|| / n^2)(I - t t^T / ||t||^2), without the projection term: positive,
// scale-aware (a leaf's Newton step is proportional to ||s||, as the loss is
// invariant to the scale of s) and never near 0, unlike |diag H|.
//
// Zero scores: the cosine is undefined at s = 0 (every query at the first
// iteration). For ||s|| < kZeroNorm the query is treated as if n = 1 and
// c = 0: Loss = 1, g = -t (the steepest direction is towards G), h = ||t||.
// One Newton step from there lands on s || t for a leaf holding the query.
//
// Queries whose labels are all equal are skipped (g = h = 0, loss 0).
class CosineObjective : public QueryObjective {
 public:
  static constexpr double kZeroNorm = 1e-12;

  // consistent = false: cosmart, true: ccosmart.
  explicit CosineObjective(bool consistent) : consistent_(consistent) {}

  std::string name() const override {
    return consistent_ ? "ccosmart" : "cosmart";
  }
  std::vector<std::string> Describe() const override;

  // Query q's gradients and hessians in double precision (pointers at the
  // query's first document).
  void QueryDerivatives(size_t q, const double* scores, double* gradients,
                        double* hessians, QueryScratch& scratch) const override;
  double QueryLoss(size_t q, const double* scores,
                   QueryScratch& scratch) const override;

 protected:
  absl::Status InitQueries(const Dataset& train, uint64_t seed) override;

 private:
  bool consistent_;
  std::vector<double> target_scale_;  // per query: t = G * scale; 0 = skip
  std::vector<double> target_norm_;   // per query: ||t||
  int32_t skipped_queries_ = 0;
};

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_COSINE_H_
