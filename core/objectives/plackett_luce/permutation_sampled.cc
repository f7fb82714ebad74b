#include "core/objectives/plackett_luce/permutation_sampled.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "core/objectives/plackett_luce/query_kernel.h"

namespace plrank {
namespace {

using pl_internal::ComputeSuffixSums;
using pl_internal::kNeverChosen;
using pl_internal::PlWorkspace;
using pl_internal::PrepareQuery;

// L'(d) and sum_C p(1-p) over the contexts holding d, for every document of
// one query, in O(n + m (K + union)). Every permutation counts 1/m (a
// context stored once for several permutations is the same set in each, so
// this equals the weighted sum over distinct contexts). Per permutation, with
// S_j the context sums (S_K = the documents it never chooses, "tail"),
//   A_j = sum_{i<=j} 1/S_i,  B_j = sum_{i<=j} 1/S_i^2,
//   C_j = sum_{k<j} e_{pi(k)} B_k,
// the document picked at j gets
//   L' += S_{j+1}/S_j - e A_{j-1},   hessian += e (C_j + S_{j+1} B_j),
// and a document in the tail gets
//   L' -= e A_{K-1},                 hessian += e (C_K + (S_K - e) B_{K-1}).
// Both are the exact sums of 1 - p and p (1 - p) regrouped so that only
// positive terms are added: no large total is ever subtracted. S_K - e is
// formed without cancellation for the tail's largest document (the sum of
// the others) and is >= S_K / 2 for every other one.
template <typename Store>
void PlQueryDerivatives(const double* scores, const PlQuery& query,
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
  // The largest never-chosen document and the sum of the others.
  int64_t rest_top = -1;
  for (uint32_t d = 0; d < n; ++d) {
    if (ws.owner[d] == kNeverChosen &&
        (rest_top < 0 || ws.exp_score[d] > ws.exp_score[rest_top])) {
      rest_top = d;
    }
  }
  double rest_but_top = 0.0;
  for (uint32_t d = 0; d < n; ++d) {
    if (ws.owner[d] == kNeverChosen && d != rest_top) {
      rest_but_top += ws.exp_score[d];
    }
  }
  const uint32_t* union_docs = contexts.union_documents(query);
  for (uint32_t i = 0; i < query.union_size; ++i) {
    ws.adjust_a[union_docs[i]] = 0.0;
    ws.adjust_b[union_docs[i]] = 0.0;
  }
  const int32_t m = contexts.num_permutations();
  const double inv_m = 1.0 / m;
  // Per-permutation sums shared by the never-chosen documents.
  double rest_a = 0.0, rest_c = 0.0, rest_b = 0.0, rest_top_second = 0.0;
  double* const a = ws.prefix_a.data();  // a[j] = A_{j-1}, a[0] = 0
  double* const b = ws.prefix_b.data();  // b[j] = B_{j-1}
  double* const c = ws.prefix_c.data();  // c[j] = C_j
  for (int32_t p = 0; p < m; ++p) {
    ComputeSuffixSums(query, contexts, p, rest, ws);
    const double* sum = ws.suffix.data();
    a[0] = b[0] = c[0] = 0.0;
    const uint32_t* order = contexts.chosen(query, p);
    for (uint32_t j = 0; j < depth; ++j) {
      const double inv = 1.0 / sum[j];
      a[j + 1] = a[j] + inv;
      b[j + 1] = b[j] + inv * inv;
      c[j + 1] = c[j] + ws.exp_score[order[j]] * b[j + 1];
    }
    for (uint32_t j = 0; j < depth; ++j) {
      const uint32_t d = order[j];
      const double e = ws.exp_score[d];
      ws.adjust_a[d] += inv_m * (sum[j + 1] / sum[j] - e * a[j]);
      ws.adjust_b[d] += inv_m * e * (c[j] + sum[j + 1] * b[j + 1]);
    }
    // The tail: never-chosen documents plus union ones p does not choose.
    double union_tail = 0.0;
    int64_t union_top = -1;
    for (uint32_t i = 0; i < query.union_size; ++i) {
      const uint32_t d = union_docs[i];
      if (ws.owner[d] == p) continue;
      union_tail += ws.exp_score[d];
      if (union_top < 0 || ws.exp_score[d] > ws.exp_score[union_top]) {
        union_top = d;
      }
    }
    const double tail = sum[depth];
    const double a_all = a[depth], b_all = b[depth], c_all = c[depth];
    for (uint32_t i = 0; i < query.union_size; ++i) {
      const uint32_t d = union_docs[i];
      if (ws.owner[d] == p) continue;
      const double e = ws.exp_score[d];
      double others = tail - e;
      if (d == union_top && (rest_top < 0 || e >= ws.exp_score[rest_top])) {
        double union_others = 0.0;  // rare: the tail's largest document
        for (uint32_t k = 0; k < query.union_size; ++k) {
          const uint32_t o = union_docs[k];
          if (o != d && ws.owner[o] != p) union_others += ws.exp_score[o];
        }
        others = union_others + rest;
      }
      ws.adjust_a[d] -= inv_m * e * a_all;
      ws.adjust_b[d] += inv_m * e * (c_all + std::max(others, 0.0) * b_all);
    }
    rest_a += inv_m * a_all;
    rest_c += inv_m * (c_all + tail * b_all);
    rest_b += inv_m * b_all;
    rest_top_second += inv_m * (c_all + (union_tail + rest_but_top) * b_all);
  }
  for (uint32_t d = 0; d < n; ++d) {
    if (ws.owner[d] != kNeverChosen) {
      store(d, ws.adjust_a[d], ws.adjust_b[d]);
      continue;
    }
    const double e = ws.exp_score[d];
    // e (C + (tail - e) B) summed over permutations; for d other than the
    // largest never-chosen document, tail - e >= tail / 2.
    const double second = d == rest_top ? e * rest_top_second
                                        : std::max(e * (rest_c - e * rest_b), 0.0);
    store(d, -e * rest_a, second);
  }
}

// -LL of one query: sum_p sum_j [w_j log S_j - (s_pi(j) - max_s) / m]
// (the max_s shifts cancel because the weights sum to 1 at every level).
double PlQueryLoss(const double* scores, const PlQuery& query,
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
      chosen += pl_internal::PlExpArgument(scores[order[j]], max_score);
    }
  }
  return normalizers - chosen / m;
}

// The base's per-thread scratch plus the Plackett-Luce workspace.
struct PlScratch : QueryScratch {
  PlWorkspace ws;
};

}  // namespace

absl::Status PlackettLucePermutationObjective::InitQueries(const Dataset& train,
                                                uint64_t seed) {
  if (!training_weights().empty()) {
    return absl::InvalidArgumentError(
        "--pl_ties=permutation takes no training weights (weight files, "
        "--position_debias=ips); use the default tie groups (--pl_ties=efron "
        "or independent)");
  }
  absl::StatusOr<PlContexts> contexts = PlContexts::Build(train, options_, seed);
  if (!contexts.ok()) return contexts.status();
  contexts_ = *std::move(contexts);
  return absl::OkStatus();
}

absl::Status PlackettLucePermutationObjective::InitWithPermutations(
    const Dataset& train,
    const std::vector<std::vector<std::vector<uint32_t>>>& permutations) {
  if (absl::Status status = BindQueries(train); !status.ok()) return status;
  absl::StatusOr<PlContexts> contexts =
      PlContexts::FromPermutations(train, options_, permutations);
  if (!contexts.ok()) return contexts.status();
  contexts_ = *std::move(contexts);
  return absl::OkStatus();
}

std::unique_ptr<QueryScratch> PlackettLucePermutationObjective::NewScratch() const {
  auto scratch = std::make_unique<PlScratch>();
  scratch->ws.Reserve(contexts_.max_query_size(), contexts_.max_depth());
  return scratch;
}

void PlackettLucePermutationObjective::QueryDerivatives(size_t q, const double* scores,
                                             double* gradients,
                                             double* hessians,
                                             QueryScratch& scratch) const {
  // The booster minimizes: gradient = -L'(d).
  PlQueryDerivatives(scores, contexts_.queries()[q], contexts_,
                     static_cast<PlScratch&>(scratch).ws,
                     [&](uint32_t d, double l1, double curvature) {
                       gradients[d] = -l1;
                       hessians[d] = curvature;
                     });
}

double PlackettLucePermutationObjective::QueryLoss(size_t q, const double* scores,
                                        QueryScratch& scratch) const {
  return PlQueryLoss(scores, contexts_.queries()[q], contexts_,
                     static_cast<PlScratch&>(scratch).ws);
}

void PlackettLucePermutationObjective::ComputeDerivatives(
    absl::Span<const double> scores, absl::Span<const uint8_t> query_in_bag,
    absl::Span<double> first, absl::Span<double> diagonal_second) const {
  ComputeDerivativesDouble(scores, query_in_bag, first, diagonal_second);
  // L' = -gradient and LL'' = -hessian: negation is exact.
  for (double& value : first) value = -value;
  for (double& value : diagonal_second) value = -value;
}

std::vector<std::string> PlackettLucePermutationObjective::Describe() const {
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
