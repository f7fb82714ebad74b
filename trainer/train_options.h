#ifndef PLRANK_TRAINER_TRAIN_OPTIONS_H_
#define PLRANK_TRAINER_TRAIN_OPTIONS_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/pipeline/train_job.h"

namespace plrank::cli {

// Whether a flag was given (on the command line, or as a param of the
// Python package) rather than left at its default.
using WasGivenFn = std::function<bool(absl::string_view)>;

// The TrainJob plrank-train's flags describe, with every check of the
// command line (objective name, ranges, --pl_paper conflicts, ...). The
// artifact's parameters record every trainer flag. Does not require
// --train or --model_out (the caller does).
absl::StatusOr<TrainJob> TrainJobFromFlags(const WasGivenFn& was_given);

// Flags given that `objective` does not read ("--listmle_l2", ...): the
// linear rankers ignore the booster's and the tree losses' flags, the tree
// objectives ignore the linear rankers'.
std::vector<std::string> IgnoredTrainFlags(const std::string& objective,
                                           const WasGivenFn& was_given);

// A flag of plrank-train (defined under trainer/, data flags included).
bool IsTrainFlag(const absl::CommandLineFlag& flag);

// Every plrank-train flag name, sorted.
std::vector<std::string> TrainFlagNames();

// `message` with every "--flag" of plrank-train written as the parameter
// name "flag" (the Python package's errors name its parameters, not the
// command line's flags): "--eval_at: 'x' is not ..." -> "eval_at: 'x' is
// not ...".
std::string ParameterMessage(absl::string_view message);

// The Python package's train params: (flag name, value in the flag's own
// syntax: "0.05", "true", "1,3,10"). The flags are set from them for the
// length of the call (then restored; calls are serialised) and the job is
// TrainJobFromFlags', so names, defaults and checks cannot drift from
// plrank-train's. An unknown name is InvalidArgument naming the nearest
// flag, or the PLRank name of a LightGBM parameter; a malformed value is
// InvalidArgument naming the param; every error names parameters, not
// flags (ParameterMessage). `ignored` (optional) receives
// IgnoredTrainFlags.
absl::StatusOr<TrainJob> TrainJobFromParams(
    const std::vector<std::pair<std::string, std::string>>& params,
    std::vector<std::string>* ignored = nullptr);

}  // namespace plrank::cli

#endif  // PLRANK_TRAINER_TRAIN_OPTIONS_H_
