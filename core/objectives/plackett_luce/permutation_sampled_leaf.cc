// The exact per-leaf Newton step of PlackettLucePermutationObjective.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/objectives/plackett_luce/leaf_step.h"
#include "core/objectives/plackett_luce/query_kernel.h"
#include "core/objectives/plackett_luce/permutation_sampled.h"

namespace plrank {
namespace {

using pl_internal::ComputeSuffixSums;
using pl_internal::kNeverChosen;
using pl_internal::PlWorkspace;
using pl_internal::PrepareQuery;

struct LeafScratch {
  std::vector<double> rest;       // per leaf: e over never-chosen documents
  std::vector<double> current;    // per leaf: e over the current context
  std::vector<uint32_t> segment_end;  // per leaf: see AccumulateQuery
  std::vector<uint8_t> touched;   // per leaf flag
  std::vector<int32_t> touched_list;
};

struct LeafWorkspace {
  PlWorkspace ws;
  LeafScratch ls;
};

// Adds one query's contributions to first/second/count (per leaf).
//
// For each permutation the contexts are swept from the smallest (j = K-1) to
// the full query, adding the picked documents back, so per-leaf sums of e
// only grow (no cancellation). A leaf's sum c_U is constant between two
// picks of its documents, and over such a run of contexts [a, b)
//   sum_j w_j p'(p' - 1) = c^2 (B_b - B_a) - c (A_b - A_a),
//   A_j = sum_{i<j} w_i / S_i,  B_j = sum_{i<j} w_i / S_i^2,
// so a permutation costs O(K + leaves touched), not O(K * leaves touched).
void AccumulateQuery(const double* scores, const int32_t* leaf,
                     const PlQuery& query, const PlContexts& contexts,
                     PlWorkspace& ws, LeafScratch& ls, double* first,
                     double* second, double* count) {
  const uint32_t n = query.size;
  const uint32_t depth = query.depth;
  double max_score;
  const double rest = PrepareQuery(scores, query, contexts, ws, &max_score);
  ls.touched_list.clear();
  for (uint32_t d = 0; d < n; ++d) {
    const int32_t u = leaf[d];
    if (u < 0) continue;
    if (!ls.touched[u]) {
      ls.touched[u] = 1;
      ls.touched_list.push_back(u);  // capacity reserved: no allocation
      ls.rest[u] = 0.0;
    }
    if (ws.owner[d] == kNeverChosen) ls.rest[u] += ws.exp_score[d];
  }
  // Every level's weights sum to 1: depth contexts per touched leaf.
  for (int32_t u : ls.touched_list) count[u] += depth;
  const int32_t m = contexts.num_permutations();
  const double inv_m = 1.0 / m;
  const uint32_t* union_docs = contexts.union_documents(query);
  double* const a = ws.prefix_a.data();
  double* const b = ws.prefix_b.data();
  auto flush = [&](int32_t u, uint32_t begin, uint32_t end) {
    if (begin >= end) return;
    const double c = ls.current[u];
    const double probability_sum = c * (a[end] - a[begin]);
    first[u] -= probability_sum;
    second[u] += c * c * (b[end] - b[begin]) - probability_sum;
  };
  for (int32_t p = 0; p < m; ++p) {
    ComputeSuffixSums(query, contexts, p, rest, ws);
    const double* w = contexts.weights(query, p);
    a[0] = b[0] = 0.0;
    for (uint32_t j = 0; j < depth; ++j) {
      const double inv = w[j] / ws.suffix[j];  // 0 for duplicate contexts
      a[j + 1] = a[j] + inv;
      b[j + 1] = b[j] + inv / ws.suffix[j];
    }
    for (int32_t u : ls.touched_list) {
      ls.current[u] = ls.rest[u];
      ls.segment_end[u] = depth;
    }
    for (uint32_t i = 0; i < query.union_size; ++i) {
      const uint32_t d = union_docs[i];
      if (ws.owner[d] != p && leaf[d] >= 0) {
        ls.current[leaf[d]] += ws.exp_score[d];
      }
    }
    const uint32_t* order = contexts.chosen(query, p);
    for (uint32_t j = depth; j-- > 0;) {
      const int32_t u = leaf[order[j]];
      if (u < 0) continue;
      // Contexts j+1 .. segment_end-1 saw the leaf without order[j].
      flush(u, j + 1, ls.segment_end[u]);
      ls.segment_end[u] = j + 1;
      ls.current[u] += ws.exp_score[order[j]];
      first[u] += inv_m;  // the numerator s_pi(j)
    }
    for (int32_t u : ls.touched_list) flush(u, 0, ls.segment_end[u]);
  }
  for (int32_t u : ls.touched_list) ls.touched[u] = 0;
}

}  // namespace

PlackettLucePermutationObjective::LeafDerivatives
PlackettLucePermutationObjective::ComputeLeafDerivatives(
    absl::Span<const double> scores,
    absl::Span<const int32_t> leaf_of_document, int32_t num_leaves) const {
  const absl::Span<const PlQuery> queries = contexts_.queries();
  LeafDerivatives result;
  pl_internal::ReduceLeafSumsByChunks<LeafWorkspace>(
      static_cast<int64_t>(queries.size()), num_leaves,
      [&](LeafWorkspace& w) {
        w.ws.Reserve(contexts_.max_query_size(), contexts_.max_depth());
        w.ls.rest.assign(num_leaves, 0.0);
        w.ls.current.assign(num_leaves, 0.0);
        w.ls.segment_end.assign(num_leaves, 0);
        w.ls.touched.assign(num_leaves, 0);
        w.ls.touched_list.reserve(num_leaves);
      },
      [&](LeafWorkspace& w, int64_t q, double* first, double* second,
          double* count) {
        const PlQuery& query = queries[q];
        if (query.depth == 0) return;
        const int32_t* leaf = leaf_of_document.data() + query.begin;
        if (leaf[0] < 0) return;  // out of this iteration's bag
        AccumulateQuery(scores.data() + query.begin, leaf, query, contexts_,
                        w.ws, w.ls, first, second, count);
      },
      &result.first, &result.second, &result.contexts);
  return result;
}

std::vector<double> PlackettLucePermutationObjective::LeafStatistics(
    absl::Span<const double> scores, const LeafAssignment& assignment) const {
  return pl_internal::PlLeafStatistics(*this, options_, scores, assignment);
}

void PlackettLucePermutationObjective::LeafValuesFromStatistics(
    absl::Span<const double> statistics, const LeafAssignment& assignment,
    absl::Span<double> leaf_values) const {
  pl_internal::PlLeafValues(*this, options_, statistics, assignment,
                            leaf_values);
}

}  // namespace plrank
