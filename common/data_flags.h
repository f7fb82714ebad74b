#ifndef PLRANK_COMMON_DATA_FLAGS_H_
#define PLRANK_COMMON_DATA_FLAGS_H_

#include "absl/status/statusor.h"
#include "core/data/letor_reader.h"
#include "core/metrics/ranking_metrics.h"

namespace plrank::cli {

// Flags shared by every program that reads LETOR files or reports metrics:
// --num_features, --duplicate_features, --allow_noncontiguous_queries,
// --empty_query_ndcg.
absl::StatusOr<ReadOptions> ReadOptionsFromFlags();
absl::StatusOr<MetricOptions> MetricOptionsFromFlags();

}  // namespace plrank::cli

#endif  // PLRANK_COMMON_DATA_FLAGS_H_
