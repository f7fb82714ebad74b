#ifndef PLRANK_COMMON_FLAG_PARSING_H_
#define PLRANK_COMMON_FLAG_PARSING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/data/letor_reader.h"
#include "core/metrics/ranking_metrics.h"

namespace plrank::cli {

// "1,3,10" -> {1, 3, 10}; every entry a positive integer.
absl::StatusOr<std::vector<int32_t>> ParseCutoffs(const std::string& text);

// "one" | "zero" | "skip".
absl::StatusOr<EmptyQueryNdcg> ParseEmptyQueryNdcg(const std::string& text);

// "error" | "last".
absl::StatusOr<DuplicateFeaturePolicy> ParseDuplicatePolicy(
    const std::string& text);

}  // namespace plrank::cli

#endif  // PLRANK_COMMON_FLAG_PARSING_H_
