#ifndef PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_LEAF_STEP_H_
#define PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_LEAF_STEP_H_

// Internal to the Plackett-Luce objectives: the deterministic parallel
// reduction of per-leaf sums and the guarded Newton leaf value they share.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/objectives/objective.h"
#include "core/objectives/plackett_luce/options.h"

namespace plrank::pl_internal {

// Queries are cut into this many contiguous chunks whatever the thread
// count; chunk sums are reduced in chunk order, so results are bitwise
// reproducible.
inline constexpr int64_t kLeafSumChunks = 64;

// Runs accumulate(workspace, q, first, second, count) for every query q in
// [0, num_queries), each chunk into its own zeroed per-leaf arrays, then sums
// the chunks in order into *first, *second, *count (num_leaves each).
// `setup(workspace)` prepares each thread's Workspace once.
template <typename Workspace, typename Setup, typename Accumulate>
void ReduceLeafSumsByChunks(int64_t num_queries, int32_t num_leaves,
                            Setup setup, Accumulate accumulate,
                            std::vector<double>* first,
                            std::vector<double>* second,
                            std::vector<double>* count) {
  const size_t stride = 3 * static_cast<size_t>(num_leaves);
  std::vector<double> chunk_sums(kLeafSumChunks * stride, 0.0);
#pragma omp parallel
  {
    Workspace ws;
    setup(ws);
#pragma omp for schedule(dynamic, 1)
    for (int64_t chunk = 0; chunk < kLeafSumChunks; ++chunk) {
      double* f = chunk_sums.data() + chunk * stride;
      const int64_t q_end = num_queries * (chunk + 1) / kLeafSumChunks;
      for (int64_t q = num_queries * chunk / kLeafSumChunks; q < q_end; ++q) {
        accumulate(ws, q, f, f + num_leaves, f + 2 * num_leaves);
      }
    }
  }
  first->assign(num_leaves, 0.0);
  second->assign(num_leaves, 0.0);
  count->assign(num_leaves, 0.0);
  for (int64_t chunk = 0; chunk < kLeafSumChunks; ++chunk) {
    const double* sums = chunk_sums.data() + chunk * stride;
    for (int32_t u = 0; u < num_leaves; ++u) {
      (*first)[u] += sums[u];
      (*second)[u] += sums[num_leaves + u];
      (*count)[u] += sums[2 * num_leaves + u];
    }
  }
}

// value = clip(L'_U / (-L''_U + lambda_l2 + damping * N_U), max_leaf_step).
inline void NewtonLeafValues(absl::Span<const double> first,
                             absl::Span<const double> second,
                             absl::Span<const double> contexts,
                             double lambda_l2,
                             const PlackettLuceOptions& options,
                             absl::Span<double> leaf_values) {
  for (size_t u = 0; u < leaf_values.size(); ++u) {
    // P(P-1) <= 0 exactly; rounding can only leave a tiny positive L''.
    const double curvature = std::max(-second[u], 0.0) + lambda_l2 +
                             options.newton_damping * contexts[u];
    double value = curvature > 0.0 ? first[u] / curvature : 0.0;
    if (options.max_leaf_step > 0.0) {
      value = std::clamp(value, -options.max_leaf_step, options.max_leaf_step);
    }
    leaf_values[u] = value;
  }
}

// |value| <= options.max_leaf_step (when set).
inline void ClipLeafValues(const PlackettLuceOptions& options,
                           absl::Span<double> leaf_values) {
  if (options.max_leaf_step <= 0.0) return;
  for (double& value : leaf_values) {
    value = std::clamp(value, -options.max_leaf_step, options.max_leaf_step);
  }
}

// LeafStatistics of a Plackett-Luce objective (one with
// ComputeLeafDerivatives): {L'_U, L''_U, N_U} per leaf for the exact Newton
// step, or with options.diagonal_leaf_step the base {sum g, sum h}.
template <typename PlObjective>
std::vector<double> PlLeafStatistics(const PlObjective& objective,
                                     const PlackettLuceOptions& options,
                                     absl::Span<const double> scores,
                                     const LeafAssignment& assignment) {
  if (options.diagonal_leaf_step) {
    return objective.Objective::LeafStatistics(scores, assignment);
  }
  const auto d = objective.ComputeLeafDerivatives(
      scores, assignment.leaf_of_document, assignment.num_leaves);
  std::vector<double> statistics;
  statistics.reserve(3 * d.first.size());
  statistics.insert(statistics.end(), d.first.begin(), d.first.end());
  statistics.insert(statistics.end(), d.second.begin(), d.second.end());
  statistics.insert(statistics.end(), d.contexts.begin(), d.contexts.end());
  return statistics;
}

// LeafValuesFromStatistics of a Plackett-Luce objective: the exact Newton
// step, or the base diagonal step; both clipped.
template <typename PlObjective>
void PlLeafValues(const PlObjective& objective,
                  const PlackettLuceOptions& options,
                  absl::Span<const double> statistics,
                  const LeafAssignment& assignment,
                  absl::Span<double> leaf_values) {
  if (options.diagonal_leaf_step) {
    objective.Objective::LeafValuesFromStatistics(statistics, assignment,
                                                  leaf_values);
    ClipLeafValues(options, leaf_values);
    return;
  }
  const size_t n = assignment.num_leaves;
  NewtonLeafValues(statistics.subspan(0, n), statistics.subspan(n, n),
                   statistics.subspan(2 * n, n), assignment.lambda_l2, options,
                   leaf_values);
}

}  // namespace plrank::pl_internal

#endif  // PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_LEAF_STEP_H_
