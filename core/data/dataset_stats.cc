#include "core/data/dataset_stats.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace plrank {
namespace {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  const double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  return 0.5 * (upper + *std::max_element(values.begin(),
                                          values.begin() + middle));
}

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values) sum += value;
  return values.empty() ? 0 : sum / values.size();
}

// Documents of query q whose row bytes occur more than once in the query.
int64_t DuplicateRows(const Dataset& data, size_t q, std::string* row,
                      std::vector<std::string>* rows) {
  const size_t begin = data.query_begin(q), end = data.query_end(q);
  const size_t width = static_cast<size_t>(data.num_features) * sizeof(float);
  rows->clear();
  for (size_t i = begin; i < end; ++i) {
    row->resize(width);
    for (int32_t f = 0; f < data.num_features; ++f) {
      const float value = data.value(i, f);
      std::memcpy(row->data() + f * sizeof(float), &value, sizeof(float));
    }
    rows->push_back(*row);
  }
  absl::flat_hash_set<std::string_view> seen, repeated;
  for (const std::string& r : *rows) {
    if (!seen.insert(r).second) repeated.insert(r);
  }
  int64_t duplicates = 0;
  for (const std::string& r : *rows) duplicates += repeated.contains(r);
  return duplicates;
}

}  // namespace

DatasetStats ComputeDatasetStats(const Dataset& data) {
  DatasetStats stats;
  stats.num_queries = data.num_queries();
  stats.num_documents = data.num_documents();
  if (stats.num_queries == 0 || stats.num_documents == 0) return stats;
  stats.label_shares.assign(data.max_label() + 1, 0.0);
  for (int32_t label : data.labels) stats.label_shares[label] += 1;
  for (double& share : stats.label_shares) share /= stats.num_documents;
  stats.relevant_share = 1.0 - stats.label_shares[0];

  std::vector<double> sizes, relevant;
  int64_t without = 0, at_most_two = 0, duplicates = 0;
  std::string row;
  std::vector<std::string> rows;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    sizes.push_back(data.query_end(q) - data.query_begin(q));
    int64_t count = 0;
    for (size_t i = data.query_begin(q); i < data.query_end(q); ++i) {
      count += data.labels[i] > 0;
    }
    relevant.push_back(count);
    without += count == 0;
    at_most_two += count <= 2;
    duplicates += DuplicateRows(data, q, &row, &rows);
  }
  stats.docs_per_query_mean = Mean(sizes);
  stats.docs_per_query_median = Median(sizes);
  stats.relevant_per_query_mean = Mean(relevant);
  stats.relevant_per_query_median = Median(relevant);
  stats.queries_without_relevant =
      static_cast<double>(without) / stats.num_queries;
  stats.queries_with_at_most_two_relevant =
      static_cast<double>(at_most_two) / stats.num_queries;
  stats.duplicate_vector_share =
      static_cast<double>(duplicates) / stats.num_documents;
  return stats;
}

std::string FormatDatasetStats(const DatasetStats& stats) {
  return absl::StrFormat(
      "%d queries, %d documents, docs/query mean %.1f median %g, label "
      "shares %s, relevant %.1f%%, relevant per query mean %.2f median %g, "
      "queries with 0 relevant %.1f%%, with 0-2 relevant %.1f%%, duplicate "
      "vectors %.1f%%",
      stats.num_queries, stats.num_documents, stats.docs_per_query_mean,
      stats.docs_per_query_median,
      absl::StrJoin(stats.label_shares, "/",
                    [](std::string* out, double share) {
                      absl::StrAppendFormat(out, "%.3f", share);
                    }),
      100 * stats.relevant_share, stats.relevant_per_query_mean,
      stats.relevant_per_query_median, 100 * stats.queries_without_relevant,
      100 * stats.queries_with_at_most_two_relevant,
      100 * stats.duplicate_vector_share);
}

int64_t CountQueriesWithRankingSignal(const Dataset& data) {
  int64_t count = 0;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    const uint32_t begin = data.query_begin(q), end = data.query_end(q);
    for (uint32_t i = begin + 1; i < end; ++i) {
      if (data.labels[i] != data.labels[begin]) {
        ++count;
        break;
      }
    }
  }
  return count;
}

}  // namespace plrank
