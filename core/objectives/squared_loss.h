#ifndef PLRANK_CORE_OBJECTIVES_SQUARED_LOSS_H_
#define PLRANK_CORE_OBJECTIVES_SQUARED_LOSS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/objectives/objective.h"
#include "core/objectives/query_objective.h"

namespace plrank {

// Which regression target the MART baselines fit.
enum class SquaredLossTarget {
  kGain,            // "mart1":  t = 2^r - 1
  kLabel,           // "mart2":  t = r
  kNormalizedGain,  // "cmart1": t = (2^r - 1) / Z, Z = the query's whole-list
                    // ideal DCG; t = 0 in queries with Z = 0
};

// Pointwise squared loss: sum_i 1/2 (s_i - t_i)^2, g = s - t, h = 1, so the
// default leaf value is the (L2-shrunk) mean residual. Every query is used,
// including those whose labels are all equal: a pointwise target still says
// something there.
class SquaredLossObjective : public QueryObjective {
 public:
  explicit SquaredLossObjective(SquaredLossTarget target) : target_(target) {}

  std::string name() const override;
  void QueryDerivatives(size_t q, const double* scores, double* gradients,
                        double* hessians, QueryScratch& scratch) const override;
  double QueryLoss(size_t q, const double* scores,
                   QueryScratch& scratch) const override;
  std::vector<std::string> Describe() const override;

  absl::Span<const double> targets() const { return targets_; }

 protected:
  // Weighted: sum_i 1/2 w_q w_i (s_i - t_i)^2.
  bool applies_own_weights() const override { return true; }

  absl::Status InitQueries(const Dataset& train, uint64_t seed) override;

 private:
  SquaredLossTarget target_;
  std::vector<double> targets_;  // per document
};

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_SQUARED_LOSS_H_
