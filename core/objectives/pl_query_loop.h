#ifndef PLRANK_CORE_OBJECTIVES_PL_QUERY_LOOP_H_
#define PLRANK_CORE_OBJECTIVES_PL_QUERY_LOOP_H_

// Internal to the Plackett-Luce objectives: the deterministic parallel loops
// over queries shared by the permutation and tie-group forms. A query type
// has `begin` and `size`; a Workspace is per thread, prepared by `setup`.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace plrank::pl_internal {

// How derivatives are written: L'(d) and the (non-positive) diagonal of LL''
// as they are, or as the booster's gradient -L'(d) and hessian -LL''.
enum class DerivativeForm { kLogLikelihood, kBoosterGradient };

// Runs kernel(ws, query, store) for every in-bag query (store(d, L'(d),
// positive curvature) for each local document d) and writes the values in
// `form` at first/second + query.begin; out-of-bag queries get zeros.
// `query_in_bag` empty means every query is in.
template <typename Workspace, typename Query, typename T, typename Setup,
          typename Kernel>
void ForEachQueryDerivatives(absl::Span<const Query> queries,
                             absl::Span<const uint8_t> query_in_bag,
                             DerivativeForm form, T* first, T* second,
                             Setup setup, Kernel kernel) {
  const int64_t nq = static_cast<int64_t>(queries.size());
  const bool booster = form == DerivativeForm::kBoosterGradient;
#pragma omp parallel
  {
    Workspace ws;
    setup(ws);
#pragma omp for schedule(dynamic, 16)
    for (int64_t q = 0; q < nq; ++q) {
      const Query& query = queries[q];
      T* g = first + query.begin;
      T* h = second + query.begin;
      if (!query_in_bag.empty() && query_in_bag[q] == 0) {
        std::fill(g, g + query.size, T{0});
        std::fill(h, h + query.size, T{0});
        continue;
      }
      kernel(ws, query, [&](uint32_t d, double l1, double curvature) {
        g[d] = static_cast<T>(booster ? -l1 : l1);
        h[d] = static_cast<T>(booster ? curvature : -curvature);
      });
    }
  }
}

// Sum over queries of loss(ws, query), computed in parallel and added in
// query order (deterministic whatever the thread count).
template <typename Workspace, typename Query, typename Setup, typename Loss>
double SumQueryLosses(absl::Span<const Query> queries, Setup setup,
                      Loss loss) {
  const int64_t nq = static_cast<int64_t>(queries.size());
  std::vector<double> per_query(queries.size(), 0.0);
#pragma omp parallel
  {
    Workspace ws;
    setup(ws);
#pragma omp for schedule(dynamic, 16)
    for (int64_t q = 0; q < nq; ++q) per_query[q] = loss(ws, queries[q]);
  }
  double total = 0.0;
  for (double value : per_query) total += value;
  return total;
}

}  // namespace plrank::pl_internal

#endif  // PLRANK_CORE_OBJECTIVES_PL_QUERY_LOOP_H_
