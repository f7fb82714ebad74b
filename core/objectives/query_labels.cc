#include "core/objectives/query_labels.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace plrank {

double IdealDcg(absl::Span<const int32_t> labels, int32_t k) {
  std::vector<int32_t> sorted(labels.begin(), labels.end());
  std::sort(sorted.begin(), sorted.end(), std::greater<int32_t>());
  const size_t depth = (k <= 0 || static_cast<size_t>(k) >= sorted.size())
                           ? sorted.size()
                           : static_cast<size_t>(k);
  double dcg = 0.0;
  for (size_t r = 0; r < depth; ++r) dcg += RelevanceGain(sorted[r]) * RankDiscount(r);
  return dcg;
}

absl::StatusOr<QueryLabels> QueryLabels::Build(const Dataset& data) {
  QueryLabels result;
  const size_t num_documents = data.num_documents();
  if (data.query_offsets.empty() || data.query_offsets.front() != 0 ||
      data.query_offsets.back() != num_documents) {
    return absl::InvalidArgumentError(
        "query offsets do not cover the training documents");
  }
  for (size_t i = 0; i < num_documents; ++i) {
    if (data.labels[i] < 0 || data.labels[i] > kMaxLabel) {
      return absl::InvalidArgumentError(
          absl::StrFormat("label %d of document %d is outside [0, %d]",
                          data.labels[i], i, kMaxLabel));
    }
  }
  result.offsets = data.query_offsets;
  result.labels = data.labels;
  result.gains.resize(num_documents);
  for (size_t i = 0; i < num_documents; ++i) {
    result.gains[i] = RelevanceGain(data.labels[i]);
  }
  const size_t num_queries = result.num_queries();
  result.ideal_dcg.resize(num_queries);
  result.all_equal.resize(num_queries);
  for (size_t q = 0; q < num_queries; ++q) {
    if (result.offsets[q + 1] < result.offsets[q]) {
      return absl::InvalidArgumentError("query offsets are not increasing");
    }
    const absl::Span<const int32_t> labels(result.labels.data() + result.begin(q),
                                           result.size(q));
    result.ideal_dcg[q] = IdealDcg(labels, 0);
    result.all_equal[q] =
        std::all_of(labels.begin(), labels.end(),
                    [&](int32_t label) { return label == labels.front(); });
    result.max_query_size = std::max(result.max_query_size, result.size(q));
  }
  return result;
}

}  // namespace plrank
