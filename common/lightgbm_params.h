#ifndef PLRANK_COMMON_LIGHTGBM_PARAMS_H_
#define PLRANK_COMMON_LIGHTGBM_PARAMS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace plrank {

// LightGBM's parameter names (and their common aliases) as PLRank knows
// them, the one table behind three uses: the hint for an unknown --flag,
// the `key=value` arguments and `config=FILE` of plrank-train, and the
// Python package's parameter errors. Every function takes `existing`, the
// flag names of the calling program, so a hint never names a flag the
// program does not have. docs/lightgbm-habits.md lists the table.

// The PLRank flag of a LightGBM parameter whose meaning is the same
// (num_leaves -> leaves, num_iterations -> trees, ...), first of its
// candidates in `existing`; empty otherwise (also for names that need a
// value translation or are refused: see LightGbmHint).
std::string LightGbmEquivalent(absl::string_view lightgbm_name,
                               const std::vector<std::string>& existing);

// One sentence on a LightGBM name that is not a PLRank flag: "LightGBM's
// num_leaves is --leaves here", or why it has no equivalent ("LightGBM's
// boosting: plrank-train grows gradient-boosted trees only ..."); empty
// when `name` is not a LightGBM parameter this table knows, or its PLRank
// counterpart is not in `existing`. `flag_prefix` is put before PLRank
// names ("--" on the command line, "" for the Python package).
std::string LightGbmHint(absl::string_view name,
                         const std::vector<std::string>& existing,
                         absl::string_view flag_prefix = "--");

// A (PLRank flag, value) setting.
using FlagSetting = std::pair<std::string, std::string>;

// The PLRank settings of LightGBM's `name=value`: none when the value is
// what PLRank always does (boosting=gbdt, lambda_l1=0, metric=ndcg,
// label_gain = LightGBM's default, task=train, ...), one when the meaning
// is the same (num_leaves=15 -> leaves=15, objective=lambdarank ->
// objective=lambdamart, verbosity=-1 -> quiet=true). InvalidArgument with
// the reason when PLRank cannot do what the value asks (boosting=dart,
// lambda_l1=0.5, metric=map, bagging_seed=3, ...), and NotFound when
// `name` is not a LightGBM parameter this table knows (the caller then
// suggests the nearest flag).
absl::StatusOr<std::vector<FlagSetting>> TranslateLightGbmParameter(
    absl::string_view name, absl::string_view value,
    const std::vector<std::string>& existing);

// Every LightGBM name the table knows (for nearest-name suggestions).
std::vector<std::string> KnownLightGbmNames();

}  // namespace plrank

#endif  // PLRANK_COMMON_LIGHTGBM_PARAMS_H_
