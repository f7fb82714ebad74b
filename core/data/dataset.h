#ifndef PLRANK_CORE_DATA_DATASET_H_
#define PLRANK_CORE_DATA_DATASET_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace plrank {

// The largest relevance grade anywhere (files, Evaluate requests): 31 keeps
// gains 2^label - 1 exact in float and every metric finite. The one label
// limit of the project.
inline constexpr int32_t kMaxLabel = 31;

// A ranking dataset held column by column in float32.
//
// Documents are stored query by query: the documents of query q are
// [query_offsets[q], query_offsets[q + 1]). Feature f of document i is
// features[f * num_documents() + i]; a missing value is NaN, an absent sparse
// entry is 0. Labels are integer relevance grades in [0, kMaxLabel].
struct Dataset {
  int32_t num_features = 0;
  std::vector<float> features;           // column-major, num_features * docs
  std::vector<int32_t> labels;           // one per document
  std::vector<uint32_t> query_offsets;   // num_queries + 1 entries, starts at 0
  std::vector<std::string> query_ids;    // one per query, as written in input
  // Empty when documents are stored in input order. Otherwise (a reader that
  // regrouped non-contiguous queries) input_line_order[i] is the 0-based
  // position among the input's data lines of stored document i.
  std::vector<uint32_t> input_line_order;
  // Optional side data of clicks training (core/data/side_files.h), each
  // empty when absent, else aligned with the stored documents / queries:
  std::vector<float> weights;         // per document, >= 0 (".weight")
  std::vector<float> query_weights;   // per query, >= 0 (query-level .weight)
  std::vector<int32_t> positions;     // per document, display position
                                      // >= 1, 0 = a candidate not shown
  std::vector<float> propensities;    // per document, in (0, 1]
  // The logging policy's position marginals (".marginals"): row i holds
  // mu(i, j), the probability that the policy showed document i at
  // position j = 1..marginal_positions, zero-padded; row-major.
  std::vector<float> marginals;
  int32_t marginal_positions = 0;
  // When this dataset is one shard of a larger set (distributed training,
  // each rank holding its share): the number of the set's queries before
  // this shard's first, and the largest label over the whole set (-1: this
  // dataset's own). Whatever depends on a query's place in the set (random
  // streams, bags) or on the label range then comes out as it would for the
  // whole set. Single-process: 0 and -1.
  uint64_t query_index_base = 0;
  int32_t set_max_label = -1;

  size_t num_documents() const { return labels.size(); }
  size_t num_queries() const {
    return query_offsets.empty() ? 0 : query_offsets.size() - 1;
  }
  const float* column(int32_t feature) const {
    return features.data() + static_cast<size_t>(feature) * num_documents();
  }
  float value(size_t document, int32_t feature) const {
    return column(feature)[document];
  }
  uint32_t query_begin(size_t query) const { return query_offsets[query]; }
  uint32_t query_end(size_t query) const { return query_offsets[query + 1]; }
  int32_t max_label() const {
    int32_t m = set_max_label > 0 ? set_max_label : 0;
    for (int32_t l : labels) m = l > m ? l : m;
    return m;
  }
};

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_DATASET_H_
