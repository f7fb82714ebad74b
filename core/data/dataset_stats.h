#ifndef PLRANK_CORE_DATA_DATASET_STATS_H_
#define PLRANK_CORE_DATA_DATASET_STATS_H_

// The statistics that tell ranking collections apart (documents per query,
// label histogram, how relevant documents spread over queries, duplicate
// feature vectors), for plrank-datagen's summary line and the regime tests.

#include <cstdint>
#include <string>
#include <vector>

#include "core/data/dataset.h"

namespace plrank {

struct DatasetStats {
  int64_t num_queries = 0;
  int64_t num_documents = 0;
  double docs_per_query_mean = 0;
  double docs_per_query_median = 0;
  // Share of documents with label k, for k = 0..max label.
  std::vector<double> label_shares;
  // Share of documents with label > 0.
  double relevant_share = 0;
  // Documents with label > 0 per query.
  double relevant_per_query_mean = 0;
  double relevant_per_query_median = 0;
  // Shares of queries with no relevant document, and with 0, 1 or 2.
  double queries_without_relevant = 0;
  double queries_with_at_most_two_relevant = 0;
  // Share of documents whose feature vector (bit for bit) equals another
  // document's of the same query.
  double duplicate_vector_share = 0;
};

DatasetStats ComputeDatasetStats(const Dataset& data);

// Queries holding at least two different labels: the only ones a ranking
// loss learns from (a query whose documents are all equally relevant has
// no order to learn).
int64_t CountQueriesWithRankingSignal(const Dataset& data);

// One line: "N queries, D documents, docs/query mean M median m, label
// shares a/b/c, relevant r%, relevant per query mean x median y, queries
// with 0 relevant z%, with 0-2 relevant w%, duplicate vectors v%".
std::string FormatDatasetStats(const DatasetStats& stats);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_DATASET_STATS_H_
