#ifndef PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_QUERY_KERNEL_H_
#define PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_QUERY_KERNEL_H_

// Internal to the Plackett-Luce objective: the per-query pieces shared by the
// gradient, the loss and the leaf Newton step. Allocation-free after Reserve.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/objectives/plackett_luce/contexts.h"
#include "core/objectives/plackett_luce/exp_range.h"

namespace plrank::pl_internal {

// owner[d] for documents no permutation chooses (the "rest").
inline constexpr int32_t kNeverChosen = -1;
// owner[d] for chosen documents before any permutation is swept.
inline constexpr int32_t kChosenSomewhere = -2;

// Per-thread scratch, sized once by the largest query and depth.
struct PlWorkspace {
  std::vector<double> exp_score;  // e_d = exp(s_d - max_s), local index
  std::vector<int32_t> owner;     // kNeverChosen / last permutation swept
  std::vector<double> suffix;     // S_j of the current permutation, j<=depth
  std::vector<double> prefix_a;   // running sums of w_j / S_j (depth + 1)
  std::vector<double> prefix_b;   // running sums of w_j / S_j^2 (depth + 1)
  std::vector<double> prefix_c;   // see QueryDerivatives (depth + 1)
  std::vector<double> adjust_a;   // per local document (chosen ones only)
  std::vector<double> adjust_b;

  void Reserve(uint32_t max_size, uint32_t max_depth) {
    exp_score.resize(max_size);
    owner.resize(max_size);
    suffix.resize(max_depth + 1);
    prefix_a.resize(max_depth + 1);
    prefix_b.resize(max_depth + 1);
    prefix_c.resize(max_depth + 1);
    adjust_a.resize(max_size);
    adjust_b.resize(max_size);
  }
};

// Fills ws.exp_score and ws.owner for the query whose scores start at
// `scores`; returns the sum of e_d over the documents no permutation chooses
// (they belong to every context). *max_score receives the shift of the
// exponentials (PlExpShift: max_s unless the scores spread very wide).
inline double PrepareQuery(const double* scores, const PlQuery& query,
                           const PlContexts& contexts, PlWorkspace& ws,
                           double* max_score) {
  const uint32_t n = query.size;
  const double top = PlExpShift(scores, n);
  for (uint32_t d = 0; d < n; ++d) {
    ws.exp_score[d] = std::exp(PlExpArgument(scores[d], top));
    ws.owner[d] = kNeverChosen;
  }
  const uint32_t* chosen = contexts.union_documents(query);
  for (uint32_t i = 0; i < query.union_size; ++i) {
    ws.owner[chosen[i]] = kChosenSomewhere;
  }
  double rest = 0.0;
  for (uint32_t d = 0; d < n; ++d) {
    if (ws.owner[d] == kNeverChosen) rest += ws.exp_score[d];
  }
  *max_score = top;
  return rest;
}

// ws.suffix[j] = S_j = sum of e_d over context j of permutation p, for
// j = 0..depth (suffix[depth] = the documents p never chooses). Built by
// adding positive terms from the back, so small contexts keep full relative
// precision (no total-minus-prefix cancellation). Marks ws.owner[d] = p for
// the documents p chooses.
inline void ComputeSuffixSums(const PlQuery& query, const PlContexts& contexts,
                              int32_t p, double rest, PlWorkspace& ws) {
  const uint32_t* order = contexts.chosen(query, p);
  for (uint32_t j = 0; j < query.depth; ++j) ws.owner[order[j]] = p;
  double tail = rest;
  const uint32_t* chosen = contexts.union_documents(query);
  for (uint32_t i = 0; i < query.union_size; ++i) {
    if (ws.owner[chosen[i]] != p) tail += ws.exp_score[chosen[i]];
  }
  ws.suffix[query.depth] = tail;
  for (uint32_t j = query.depth; j-- > 0;) {
    tail += ws.exp_score[order[j]];
    ws.suffix[j] = tail;
  }
}

}  // namespace plrank::pl_internal

#endif  // PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_QUERY_KERNEL_H_
