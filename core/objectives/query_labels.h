#ifndef PLRANK_CORE_OBJECTIVES_QUERY_LABELS_H_
#define PLRANK_CORE_OBJECTIVES_QUERY_LABELS_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"

namespace plrank {

// Gain of a relevance grade, 2^r - 1 (the NDCG gain used everywhere).
inline double RelevanceGain(int32_t label) {
  return std::ldexp(1.0, label) - 1.0;
}

// Discount of 0-based rank r, 1 / log2(r + 2).
inline double RankDiscount(size_t rank) {
  return 1.0 / std::log2(static_cast<double>(rank) + 2.0);
}

// Ideal DCG@k of a query (k <= 0 or k >= labels.size(): whole list), with
// gains 2^r - 1 and discount 1/log2(rank + 2).
double IdealDcg(absl::Span<const int32_t> labels, int32_t k);

// What the per-query (listwise and pointwise) objectives share, computed once
// at Init from the training labels: boundaries, gains 2^r - 1, whole-list
// ideal DCG and whether all labels of a query are equal (no ranking signal).
struct QueryLabels {
  std::vector<uint32_t> offsets;      // num_queries + 1
  std::vector<int32_t> labels;        // per document
  std::vector<double> gains;          // per document, 2^label - 1
  std::vector<double> ideal_dcg;      // per query, whole list
  std::vector<uint8_t> all_equal;     // per query: every label the same
  uint32_t max_query_size = 0;

  // InvalidArgument for a negative label, a label above 62 (2^r overflows
  // nothing but makes no sense) or inconsistent query offsets.
  static absl::StatusOr<QueryLabels> Build(const Dataset& data);

  size_t num_queries() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  size_t num_documents() const { return labels.size(); }
  uint32_t begin(size_t q) const { return offsets[q]; }
  uint32_t size(size_t q) const { return offsets[q + 1] - offsets[q]; }
};

// Per-thread buffers for a query kernel; grown once, never shrunk.
struct QueryScratch {
  std::vector<double> first;
  std::vector<double> second;
  std::vector<double> work;
  std::vector<int32_t> labels;
  std::vector<uint32_t> order;
};

// True when query q takes part in this iteration (empty flags: all do).
inline bool QueryInBag(absl::Span<const uint8_t> query_in_bag, size_t q) {
  return query_in_bag.empty() || query_in_bag[q] != 0;
}

// Runs fn(q, scratch) for every query in parallel. Deterministic whatever the
// thread count as long as fn only writes query q's own outputs.
template <typename Fn>
void ForEachQuery(const QueryLabels& queries, Fn&& fn) {
  const int64_t num_queries = static_cast<int64_t>(queries.num_queries());
#pragma omp parallel
  {
    QueryScratch scratch;
    scratch.first.reserve(queries.max_query_size);
    scratch.second.reserve(queries.max_query_size);
    scratch.work.reserve(queries.max_query_size);
    scratch.order.reserve(queries.max_query_size);
#pragma omp for schedule(dynamic, 16)
    for (int64_t q = 0; q < num_queries; ++q) fn(static_cast<size_t>(q), scratch);
  }
}

// Fills gradients/hessians query by query from a double-precision kernel
// derivatives(q, first, second) writing n values each; out-of-bag queries get
// zeros. Shared by the listwise objectives whose kernels work per query.
template <typename Fn>
void WriteQueryDerivatives(const QueryLabels& queries,
                           absl::Span<const uint8_t> query_in_bag,
                           absl::Span<float> gradients,
                           absl::Span<float> hessians, Fn&& derivatives) {
  ForEachQuery(queries, [&](size_t q, QueryScratch& scratch) {
    const uint32_t begin = queries.begin(q);
    const uint32_t n = queries.size(q);
    scratch.first.assign(n, 0.0);
    scratch.second.assign(n, 0.0);
    if (QueryInBag(query_in_bag, q)) {
      derivatives(q, scratch.first.data(), scratch.second.data());
    }
    for (uint32_t i = 0; i < n; ++i) {
      gradients[begin + i] = static_cast<float>(scratch.first[i]);
      hessians[begin + i] = static_cast<float>(scratch.second[i]);
    }
  });
}

// Sum over queries of loss(q, scratch), computed in parallel and added in
// query order, so the result does not depend on the thread count.
template <typename Fn>
double SumOverQueries(const QueryLabels& queries, Fn&& loss) {
  std::vector<double> per_query(queries.num_queries(), 0.0);
  ForEachQuery(queries, [&](size_t q, QueryScratch& scratch) {
    per_query[q] = loss(q, scratch);
  });
  double total = 0.0;
  for (double value : per_query) total += value;
  return total;
}

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_QUERY_LABELS_H_
