#include "core/objectives/plackett_luce.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "core/objectives/pl_query_kernel.h"

namespace plrank {
namespace {

using pl_internal::ComputeSuffixSums;
using pl_internal::kNeverChosen;
using pl_internal::PlWorkspace;
using pl_internal::PrepareQuery;

// L'(d) and sum_C w_C p(1-p) for every document of one query, in O(n + m K):
// with A_j = sum_{i<=j} w_i / S_i (per permutation), document d at position
// j of permutation p gets e_d * A_j, and one never chosen by p gets e_d *
// A_{K-1}. So every document starts from base = sum_p A_{K-1} and the chosen
// ones are corrected by A_j - A_{K-1}.
template <typename Store>
void QueryDerivatives(const double* scores, const PlQuery& query,
                      const PlContexts& contexts, PlWorkspace& ws,
                      Store store) {
  const uint32_t n = query.size;
  const uint32_t depth = query.depth;
  if (depth == 0) {
    for (uint32_t d = 0; d < n; ++d) store(d, 0.0, 0.0);
    return;
  }
  double max_score;
  const double rest = PrepareQuery(scores, query, contexts, ws, &max_score);
  const uint32_t* union_docs = contexts.union_documents(query);
  for (uint32_t i = 0; i < query.union_size; ++i) {
    ws.adjust_a[union_docs[i]] = 0.0;
    ws.adjust_b[union_docs[i]] = 0.0;
    ws.chosen_count[union_docs[i]] = 0.0;
  }
  const int32_t m = contexts.num_permutations();
  const double inv_m = 1.0 / m;
  double base_a = 0.0, base_b = 0.0;
  for (int32_t p = 0; p < m; ++p) {
    ComputeSuffixSums(query, contexts, p, rest, ws);
    const double* w = contexts.weights(query, p);
    double a = 0.0, b = 0.0;
    for (uint32_t j = 0; j < depth; ++j) {
      if (w[j] != 0.0) {
        const double inv = w[j] / ws.suffix[j];
        a += inv;
        b += inv / ws.suffix[j];
      }
      ws.prefix_a[j] = a;
      ws.prefix_b[j] = b;
    }
    base_a += a;
    base_b += b;
    const uint32_t* order = contexts.chosen(query, p);
    for (uint32_t j = 0; j < depth; ++j) {
      ws.adjust_a[order[j]] += ws.prefix_a[j] - a;
      ws.adjust_b[order[j]] += ws.prefix_b[j] - b;
      ws.chosen_count[order[j]] += inv_m;
    }
  }
  for (uint32_t d = 0; d < n; ++d) {
    double a = base_a, b = base_b, numerator = 0.0;
    if (ws.owner[d] != kNeverChosen) {
      a += ws.adjust_a[d];
      b += ws.adjust_b[d];
      numerator = ws.chosen_count[d];
    }
    const double e = ws.exp_score[d];
    const double probability_sum = e * a;
    const double diagonal = probability_sum - e * e * b;
    store(d, numerator - probability_sum, std::max(diagonal, 0.0));
  }
}

// -LL of one query: sum_p sum_j [w_j log S_j - (s_pi(j) - max_s) / m]
// (the max_s shifts cancel because the weights sum to 1 at every level).
double QueryLoss(const double* scores, const PlQuery& query,
                 const PlContexts& contexts, PlWorkspace& ws) {
  if (query.depth == 0) return 0.0;
  double max_score;
  const double rest = PrepareQuery(scores, query, contexts, ws, &max_score);
  const int32_t m = contexts.num_permutations();
  double normalizers = 0.0, chosen = 0.0;
  for (int32_t p = 0; p < m; ++p) {
    ComputeSuffixSums(query, contexts, p, rest, ws);
    const double* w = contexts.weights(query, p);
    const uint32_t* order = contexts.chosen(query, p);
    for (uint32_t j = 0; j < query.depth; ++j) {
      if (w[j] != 0.0) normalizers += w[j] * std::log(ws.suffix[j]);
      chosen += scores[order[j]] - max_score;
    }
  }
  return normalizers - chosen / m;
}

bool InBag(absl::Span<const uint8_t> query_in_bag, size_t q) {
  return query_in_bag.empty() || query_in_bag[q] != 0;
}

}  // namespace

absl::Status PlackettLuceObjective::Init(const Dataset& train, uint64_t seed) {
  absl::StatusOr<PlContexts> contexts = PlContexts::Build(train, options_, seed);
  if (!contexts.ok()) return contexts.status();
  contexts_ = *std::move(contexts);
  return absl::OkStatus();
}

absl::Status PlackettLuceObjective::InitWithPermutations(
    const Dataset& train,
    const std::vector<std::vector<std::vector<uint32_t>>>& permutations) {
  absl::StatusOr<PlContexts> contexts =
      PlContexts::FromPermutations(train, options_, permutations);
  if (!contexts.ok()) return contexts.status();
  contexts_ = *std::move(contexts);
  return absl::OkStatus();
}

// Runs the per-query kernel over in-bag queries in parallel, letting `store`
// write each document's (first, second) derivatives as T into first/second;
// out-of-bag queries get zeros.
template <typename T, typename Store>
void PlackettLuceObjective::ForEachQueryDerivative(
    absl::Span<const double> scores, absl::Span<const uint8_t> query_in_bag,
    T* first, T* second, Store store) const {
  const absl::Span<const PlQuery> queries = contexts_.queries();
  const int64_t nq = static_cast<int64_t>(queries.size());
#pragma omp parallel
  {
    PlWorkspace ws;
    ws.Reserve(contexts_.max_query_size(), contexts_.max_depth());
#pragma omp for schedule(dynamic, 16)
    for (int64_t q = 0; q < nq; ++q) {
      const PlQuery& query = queries[q];
      T* g = first + query.begin;
      T* h = second + query.begin;
      if (!InBag(query_in_bag, q)) {
        std::fill(g, g + query.size, T{0});
        std::fill(h, h + query.size, T{0});
        continue;
      }
      QueryDerivatives(scores.data() + query.begin, query, contexts_, ws,
                       [&](uint32_t d, double l1, double l2) {
                         store(g + d, h + d, l1, l2);
                       });
    }
  }
}

void PlackettLuceObjective::ComputeDerivatives(
    absl::Span<const double> scores, absl::Span<const uint8_t> query_in_bag,
    absl::Span<double> first, absl::Span<double> diagonal_second) const {
  ForEachQueryDerivative(scores, query_in_bag, first.data(),
                         diagonal_second.data(),
                         [](double* g, double* h, double l1, double l2) {
                           *g = l1;
                           *h = -l2;
                         });
}

void PlackettLuceObjective::ComputeGradients(
    absl::Span<const double> scores, absl::Span<const uint8_t> query_in_bag,
    absl::Span<float> gradients, absl::Span<float> hessians) {
  // The booster minimizes: gradient = -L'(d).
  ForEachQueryDerivative(scores, query_in_bag, gradients.data(),
                         hessians.data(),
                         [](float* g, float* h, double l1, double diagonal) {
                           *g = static_cast<float>(-l1);
                           *h = static_cast<float>(diagonal);
                         });
}

double PlackettLuceObjective::Loss(absl::Span<const double> scores) const {
  const absl::Span<const PlQuery> queries = contexts_.queries();
  const int64_t nq = static_cast<int64_t>(queries.size());
  std::vector<double> per_query(queries.size(), 0.0);
#pragma omp parallel
  {
    PlWorkspace ws;
    ws.Reserve(contexts_.max_query_size(), contexts_.max_depth());
#pragma omp for schedule(dynamic, 16)
    for (int64_t q = 0; q < nq; ++q) {
      per_query[q] = QueryLoss(scores.data() + queries[q].begin, queries[q],
                               contexts_, ws);
    }
  }
  double total = 0.0;  // fixed order: deterministic
  for (double loss : per_query) total += loss;
  return total;
}

std::vector<std::string> PlackettLuceObjective::Describe() const {
  const int64_t total = contexts_.total_contexts();
  const int64_t distinct = contexts_.distinct_contexts();
  const double ratio =
      total > 0 ? static_cast<double>(distinct) / static_cast<double>(total)
                : 1.0;
  return {
      absl::StrFormat(
          "plrank: top-k %d, permutations %d, skip tied queries %s, stop at "
          "lowest label %s; %d of %d queries have contexts",
          options_.topk, options_.permutations,
          options_.skip_tied_queries ? "yes" : "no",
          options_.stop_at_lowest_label ? "yes" : "no",
          contexts_.queries_with_contexts(), contexts_.queries().size()),
      absl::StrFormat(
          "contexts: %d distinct of %d (ratio %.3f, equivalent objectives "
          "%.2f)",
          distinct, total, ratio, ratio * contexts_.num_permutations())};
}

}  // namespace plrank
