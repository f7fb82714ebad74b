#include "core/data/dataset_slice.h"

#include <algorithm>

namespace plrank {

Dataset SliceQueries(const Dataset& data, size_t first_query,
                     size_t end_query) {
  Dataset slice;
  slice.num_features = data.num_features;
  const uint32_t first_doc = data.query_offsets[first_query];
  const uint32_t end_doc = data.query_offsets[end_query];
  const size_t docs = end_doc - first_doc;
  slice.labels.assign(data.labels.begin() + first_doc,
                      data.labels.begin() + end_doc);
  slice.query_offsets.reserve(end_query - first_query + 1);
  for (size_t q = first_query; q <= end_query; ++q) {
    slice.query_offsets.push_back(data.query_offsets[q] - first_doc);
  }
  if (data.query_ids.size() >= end_query) {
    slice.query_ids.assign(data.query_ids.begin() + first_query,
                           data.query_ids.begin() + end_query);
  }
  auto slice_docs = [&](const auto& from, auto* to) {
    if (!from.empty()) to->assign(from.begin() + first_doc, from.begin() + end_doc);
  };
  slice_docs(data.weights, &slice.weights);
  slice_docs(data.positions, &slice.positions);
  slice_docs(data.propensities, &slice.propensities);
  if (!data.marginals.empty()) {
    const size_t k = static_cast<size_t>(data.marginal_positions);
    slice.marginal_positions = data.marginal_positions;
    slice.marginals.assign(data.marginals.begin() + first_doc * k,
                           data.marginals.begin() + end_doc * k);
  }
  if (!data.query_weights.empty()) {
    slice.query_weights.assign(data.query_weights.begin() + first_query,
                               data.query_weights.begin() + end_query);
  }
  slice.features.resize(static_cast<size_t>(data.num_features) * docs);
  for (int32_t f = 0; f < data.num_features; ++f) {
    const float* column = data.column(f);
    std::copy(column + first_doc, column + end_doc,
              slice.features.begin() + static_cast<size_t>(f) * docs);
  }
  return slice;
}

}  // namespace plrank
