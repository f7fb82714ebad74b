#ifndef PLRANK_CORE_OBJECTIVES_LISTNET_KL_H_
#define PLRANK_CORE_OBJECTIVES_LISTNET_KL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/objectives/objective.h"
#include "core/objectives/query_objective.h"

namespace plrank {

// KLMART ("klmart") and c-KLMART ("cklmart"): the ListNet top-1 cross
// entropy per query,
//   L = -sum_i t_i log p_i,  p = softmax(s),
//   t = G / sum G (klmart, a distribution) or G / Z (cklmart, Z = whole-list
//   ideal DCG, so sum t = sum G / Z is not 1).
// With T = sum t: g_i = T p_i - t_i and h_i = T p_i (1 - p_i), the exact
// gradient and Hessian diagonal (for klmart T = 1: g = p - t, h = p(1 - p)).
// Queries whose labels are all equal are skipped (g = h = 0, loss 0).
class ListNetKlObjective : public QueryObjective {
 public:
  // consistent = false: klmart, true: cklmart.
  explicit ListNetKlObjective(bool consistent) : consistent_(consistent) {}

  std::string name() const override {
    return consistent_ ? "cklmart" : "klmart";
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
  int32_t skipped_queries_ = 0;
};

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_LISTNET_KL_H_
