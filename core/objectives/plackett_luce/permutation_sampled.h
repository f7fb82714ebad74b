#ifndef PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_PERMUTATION_SAMPLED_H_
#define PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_PERMUTATION_SAMPLED_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/objectives/objective.h"
#include "core/objectives/plackett_luce/contexts.h"
#include "core/objectives/plackett_luce/options.h"
#include "core/objectives/query_objective.h"

namespace plrank {

// The Plackett-Luce (ListMLE) objective of PLRank (Xia, Zhai & Wang):
//   LL(s) = (1/m) sum_p sum_q sum_{j<K} [ s_{pi(j)} - log sum_{d in C_j} e^s_d ]
// over m ground-truth permutations per query. Loss() = -LL.
//
// ComputeGradients writes gradient = -L'(d) (the booster minimizes) with
//   L'(d) = (1/m) #{p : d in top-K of pi_p} - sum_{C contains d} w_C p(d|C)
// and hessian = sum_{C contains d} w_C p(d|C)(1 - p(d|C)), O(n + m K) per
// query. ComputeLeafValues is the exact per-leaf Newton step (not the
// diagonal approximation):
//   L'_U = sum_{d in U} L'(d),
//   L''_U = sum_C w_C p'_{U,C} (p'_{U,C} - 1),  p'_{U,C} = sum_{d in U∩C} p(d|C)
//   value = clip(L'_U / (-L''_U + lambda_l2 + damping * N_U), max_leaf_step)
// where N_U is the weighted number of contexts of the (in-bag) queries that
// have a document in U (so the damping scales with the terms of L''_U). The value is added
// to the scores (times the learning rate): the ascent direction of LL.
//
// All methods are deterministic whatever the OpenMP thread count.
class PlackettLucePermutationObjective : public QueryObjective {
 public:
  explicit PlackettLucePermutationObjective(const PlackettLuceOptions& options)
      : options_(options) {}

  std::string name() const override { return "plrank"; }
  bool prefers_newton_split_gain() const override {
    return options_.newton_split_gain;
  }
  // Init with given ground-truth permutations (see PlContexts).
  absl::Status InitWithPermutations(
      const Dataset& train,
      const std::vector<std::vector<std::vector<uint32_t>>>& permutations);

  // Query q's booster gradient -L'(d) and hessian (see above).
  void QueryDerivatives(size_t q, const double* scores, double* gradients,
                        double* hessians, QueryScratch& scratch) const override;
  double QueryLoss(size_t q, const double* scores,
                   QueryScratch& scratch) const override;
  std::vector<double> LeafStatistics(
      absl::Span<const double> scores,
      const LeafAssignment& assignment) const override;
  void LeafValuesFromStatistics(absl::Span<const double> statistics,
                                const LeafAssignment& assignment,
                                absl::Span<double> leaf_values) const override;
  std::vector<std::string> Describe() const override;

  // Exact first/second derivatives of LL w.r.t. a shift of each leaf, and
  // N_U (see above). Documents with leaf -1 are
  // in no leaf (they still count in the contexts' normalizers); a query whose
  // first document has leaf -1 is out of the bag and skipped entirely.
  struct LeafDerivatives {
    std::vector<double> first;     // L'_U
    std::vector<double> second;    // L''_U (<= 0)
    std::vector<double> contexts;  // N_U
  };
  LeafDerivatives ComputeLeafDerivatives(
      absl::Span<const double> scores,
      absl::Span<const int32_t> leaf_of_document, int32_t num_leaves) const;

  // L'(d) and L'' diagonal in double precision (gradient/hessian before the
  // sign flip and float rounding); for tests and diagnostics.
  void ComputeDerivatives(absl::Span<const double> scores,
                          absl::Span<const uint8_t> query_in_bag,
                          absl::Span<double> first,
                          absl::Span<double> diagonal_second) const;

  const PlContexts& contexts() const { return contexts_; }
  const PlackettLuceOptions& options() const { return options_; }

 protected:
  absl::Status InitQueries(const Dataset& train, uint64_t seed) override;
  // Refuses every weight itself (InitQueries), with a message that says so.
  bool applies_own_weights() const override { return true; }
  std::unique_ptr<QueryScratch> NewScratch() const override;

 private:
  PlackettLuceOptions options_;
  PlContexts contexts_;
};

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_PERMUTATION_SAMPLED_H_
