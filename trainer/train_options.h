#ifndef PLRANK_TRAINER_TRAIN_OPTIONS_H_
#define PLRANK_TRAINER_TRAIN_OPTIONS_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/pipeline/train_job.h"
#include "trainer/params/train_params.h"

namespace plrank::cli {

// Whether a flag was given (on the command line, or as a param of the
// Python package) rather than left at its default.
using WasGivenFn = std::function<bool(absl::string_view)>;

// The TrainJob a set of parameter values describes, with every check of
// the command line (objective name, ranges, --pl_paper conflicts, ...);
// reads no flag. The artifact's parameters record every parameter (but the
// checkpoint ones, and the clicks ones at their defaults), with what a
// preset fixed (--pl_paper: the paper's settings) and what split_gain=auto
// chose. Does not require --train or --model_out (the caller does).
absl::StatusOr<TrainJob> TrainJobFromValues(const TrainParamValues& values,
                                            const ReadOptions& read_options,
                                            const MetricOptions& metric_options);

// plrank-train's flags as parameter values; `was_given` says which were
// given.
TrainParamValues TrainParamValuesFromFlags(const WasGivenFn& was_given);

// TrainJobFromValues of plrank-train's flags, with the data and metric
// flags (common/data_flags.h).
absl::StatusOr<TrainJob> TrainJobFromFlags(const WasGivenFn& was_given);

// Flags given that `objective` does not read ("--listmle_l2", ...): the
// linear rankers ignore the booster's and the tree losses' flags, the tree
// objectives ignore the linear rankers'.
std::vector<std::string> IgnoredTrainFlags(const std::string& objective,
                                           const WasGivenFn& was_given);

// Every training parameter's name (TrainParams()), sorted: plrank-train's
// flags but for the data and metric flags every program shares.
std::vector<std::string> TrainFlagNames();

// `message` with every "--flag" of plrank-train written as the parameter
// name "flag" (the Python package's errors name its parameters, not the
// command line's flags): "--eval_at: 'x' is not ..." -> "eval_at: 'x' is
// not ...".
std::string ParameterMessage(absl::string_view message);

// The Python package's train params: (parameter name, value in the flag's
// own syntax: "0.05", "true", "1,3,10"), set into TrainParamValues; the job
// is TrainJobFromValues' with the data and metric defaults, so names,
// defaults and checks cannot drift from plrank-train's. No process-global
// state is read or written (no flag), so calls may run concurrently. An unknown name is InvalidArgument naming the nearest
// flag, or the PLRank name of a LightGBM parameter; a malformed value is
// InvalidArgument naming the param; every error names parameters, not
// flags (ParameterMessage). `ignored` (optional) receives
// IgnoredTrainFlags.
absl::StatusOr<TrainJob> TrainJobFromParams(
    const std::vector<std::pair<std::string, std::string>>& params,
    std::vector<std::string>* ignored = nullptr);

}  // namespace plrank::cli

#endif  // PLRANK_TRAINER_TRAIN_OPTIONS_H_
