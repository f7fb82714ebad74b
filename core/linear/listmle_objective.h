#ifndef PLRANK_CORE_LINEAR_LISTMLE_OBJECTIVE_H_
#define PLRANK_CORE_LINEAR_LISTMLE_OBJECTIVE_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/linear/feature_scaling.h"

namespace plrank {

// The linear ListMLE objective in standardized-weight space (what L-BFGS
// minimizes):
//   F(v) = -sum_q log p_K(pi_q | s_q) + (l2 / 2) ||v||^2,
//   s_i = sum_f (v_f / stddev_f) x_if  (NaN -> 0; inactive features ignored),
// with log p_K the top-K Plackett-Luce log-likelihood of the query's
// ground-truth permutation pi_q (labels descending, ties broken by a shuffle
// drawn from stream q of `seed`), K = min(topk, n), topk = 0 meaning n.
// Queries whose labels are all equal are skipped. The likelihood is summed
// (not averaged) over queries, so l2 is the precision of a Gaussian prior on
// each standardized weight.
//
// Evaluate costs O(n) per query beyond the O(n * features) products: log-sum-
// exps of the contexts come from one backward pass with a running maximum,
// and sum_{j <= J} p(d | C_j) from a forward recurrence. The result does not
// depend on the thread count (per-document and per-feature reductions run in
// a fixed order). The dataset must outlive the object.
class ListMleObjective {
 public:
  ListMleObjective(const Dataset& data, const FeatureScaling& scaling,
                   int32_t topk, double l2, uint64_t seed);

  // F(v); gradient (size num_features) receives dF/dv. v has num_features
  // entries.
  double Evaluate(absl::Span<const double> v, absl::Span<double> gradient);

  int32_t num_informative_queries() const {
    return static_cast<int32_t>(informative_.size());
  }

 private:
  const Dataset& data_;
  const FeatureScaling& scaling_;
  const int32_t topk_;
  const double l2_;
  std::vector<uint32_t> informative_;  // query indices
  // Ground-truth permutation of query q (global document indices) at
  // [query_begin(q), query_end(q)); only informative queries are filled.
  std::vector<uint32_t> permutation_;
  std::vector<double> raw_weights_;
  std::vector<double> scores_;
  std::vector<double> context_lse_;   // log-sum-exp of C_j, by position
  std::vector<double> doc_gradient_;  // d log p / d s_i
  std::vector<double> query_log_likelihood_;
};

}  // namespace plrank

#endif  // PLRANK_CORE_LINEAR_LISTMLE_OBJECTIVE_H_
