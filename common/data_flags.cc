#include "common/data_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "common/flag_parsing.h"

ABSL_FLAG(int32_t, num_features, 0,
          "Feature count of the data: 0 infers it from the largest index; "
          "otherwise an index above it is an error.");
ABSL_FLAG(int32_t, max_feature_index, plrank::ReadOptions().max_feature_index,
          "Largest feature index accepted when --num_features is 0; a larger "
          "one fails with its file and line (it would make the dense feature "
          "matrix that wide).");
ABSL_FLAG(std::string, duplicate_features, "error",
          "A feature index repeated within a line: 'error' (default) or "
          "'last' (the last value wins).");
ABSL_FLAG(bool, allow_noncontiguous_queries, false,
          "Gather the lines of a query that appears in several places "
          "instead of failing.");
ABSL_FLAG(std::string, empty_query_ndcg, "one",
          "NDCG of a query without relevant documents: 'one' (LightGBM's "
          "convention), 'zero', or 'skip' (left out of the mean).");

namespace plrank::cli {

absl::StatusOr<ReadOptions> ReadOptionsFromFlags() {
  ReadOptions options;
  options.num_features = absl::GetFlag(FLAGS_num_features);
  if (options.num_features < 0) {
    return absl::InvalidArgumentError("--num_features must be >= 0");
  }
  options.max_feature_index = absl::GetFlag(FLAGS_max_feature_index);
  if (options.max_feature_index < 1) {
    return absl::InvalidArgumentError("--max_feature_index must be >= 1");
  }
  absl::StatusOr<DuplicateFeaturePolicy> duplicates =
      ParseDuplicatePolicy(absl::GetFlag(FLAGS_duplicate_features));
  if (!duplicates.ok()) return duplicates.status();
  options.duplicates = *duplicates;
  options.allow_noncontiguous_queries =
      absl::GetFlag(FLAGS_allow_noncontiguous_queries);
  return options;
}

absl::StatusOr<MetricOptions> MetricOptionsFromFlags() {
  MetricOptions options;
  absl::StatusOr<EmptyQueryNdcg> empty =
      ParseEmptyQueryNdcg(absl::GetFlag(FLAGS_empty_query_ndcg));
  if (!empty.ok()) return empty.status();
  options.empty_query = *empty;
  return options;
}

}  // namespace plrank::cli
