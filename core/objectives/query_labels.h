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

  // InvalidArgument for a label outside [0, kMaxLabel] (the project's one
  // label limit, core/data/dataset.h) or inconsistent query offsets.
  static absl::StatusOr<QueryLabels> Build(const Dataset& data);

  size_t num_queries() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  size_t num_documents() const { return labels.size(); }
  uint32_t begin(size_t q) const { return offsets[q]; }
  uint32_t size(size_t q) const { return offsets[q + 1] - offsets[q]; }
};

// Per-thread buffers of a per-query kernel (QueryObjective::NewScratch);
// grown once, never shrunk. A loss that needs more derives from it.
struct QueryScratch {
  virtual ~QueryScratch() = default;
  std::vector<double> first;
  std::vector<double> second;
  std::vector<double> work;
  std::vector<int32_t> labels;
  std::vector<uint32_t> order;
};

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_QUERY_LABELS_H_
