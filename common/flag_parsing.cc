#include "common/flag_parsing.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace plrank::cli {

absl::StatusOr<std::vector<int32_t>> ParseCutoffs(const std::string& text) {
  std::vector<int32_t> cutoffs;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int32_t k = 0;
    if (!absl::SimpleAtoi(part, &k) || k <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--eval_at: '", part, "' is not a positive integer cut-off"));
    }
    cutoffs.push_back(k);
  }
  if (cutoffs.empty()) {
    return absl::InvalidArgumentError("--eval_at: no cut-off given");
  }
  return cutoffs;
}

absl::StatusOr<EmptyQueryNdcg> ParseEmptyQueryNdcg(const std::string& text) {
  if (text == "one") return EmptyQueryNdcg::kOne;
  if (text == "zero") return EmptyQueryNdcg::kZero;
  if (text == "skip") return EmptyQueryNdcg::kSkip;
  return absl::InvalidArgumentError(absl::StrCat(
      "--empty_query_ndcg: '", text, "' is not one of one, zero, skip"));
}

absl::StatusOr<DuplicateFeaturePolicy> ParseDuplicatePolicy(
    const std::string& text) {
  if (text == "error") return DuplicateFeaturePolicy::kError;
  if (text == "last") return DuplicateFeaturePolicy::kLastWins;
  return absl::InvalidArgumentError(absl::StrCat(
      "--duplicate_features: '", text, "' is not one of error, last"));
}

}  // namespace plrank::cli
