#ifndef PLRANK_TRAINER_PARAMS_TRAIN_PARAMS_H_
#define PLRANK_TRAINER_PARAMS_TRAIN_PARAMS_H_

// The training parameters, declared once in train_params.inc: their types,
// defaults, ranges, help and LightGBM names. plrank-train's flags
// (trainer/train_options.cc), the Python package's params and the
// benchmarks' shared flags (bench/) are built from it; TrainJobFromValues
// (train_options.h) turns a set of values into a TrainJob without any
// process-global state.

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/objectives/registry.h"
#include "core/pipeline/click_training.h"

namespace plrank::cli {

// Which objectives read a parameter, and how the artifact records it.
enum class TrainParamGroup {
  kData,        // what is read (recorded)
  kCheckpoint,  // where checkpoints go; never recorded (a resumed run's
                // artifact equals an uninterrupted one's)
  kObjective,   // --objective
  kBooster,     // the booster's: ignored by the linear rankers
  kTreeLoss,    // the tree objectives' losses: ignored by the linear rankers
  kShared,      // a tree loss's and a linear ranker's (pl_topk)
  kLinear,      // one linear ranker's (LinearTrainer::own_flags)
  kRun,         // every objective's (threads, seed, cut-offs)
  kOutput,      // where the results go and what is printed
  kClicks,      // learning from clicks; recorded only when not the default
  kDistributed,  // how a distributed run finds splits (the booster's, like
                 // kBooster); recorded only when not the default
};

enum class TrainParamType { kBool, kInt32, kUint64, kDouble, kString };

// One row of the table.
struct TrainParam {
  std::string name;
  TrainParamType type;
  TrainParamGroup group;
  std::string default_value;  // in flag syntax, as --help prints it
  std::string range;          // accepted values in words; "" = the type's
  std::string lightgbm;       // LightGBM's name of it; "" = none
  std::string help;
};

// Every training parameter, in the table's order.
const std::vector<TrainParam>& TrainParams();

// The parameter called `name`, or null.
const TrainParam* FindTrainParam(absl::string_view name);

// "int32", "uint64", "double", "bool" or "string".
const char* TrainParamTypeName(TrainParamType type);

// The --help text of a parameter: its help, then its range and LightGBM
// name when it has them ("Leaves per tree ... [>= 2; LightGBM num_leaves]").
std::string TrainParamFlagHelp(absl::string_view name);

// The C++ type of each parameter, for other programs' flags of the same
// meaning (bench/: ABSL_FLAG(plrank::cli::train_param_type::seed, seed, ...)),
// so that a seed is a uint64 wherever it is a flag.
namespace train_param_type {
#define PLRANK_TRAIN_PARAM(type, name, ...) using name = type;
#include "trainer/params/train_params.inc"
#undef PLRANK_TRAIN_PARAM
}  // namespace train_param_type

// A value for every training parameter (the table's defaults unless set)
// and which were given. The Python package fills one from its params, the
// command line from its flags; neither touches the other's state.
struct TrainParamValues {
#define PLRANK_TRAIN_PARAM(type, name, default_value, ...) \
  type name = default_value;
#include "trainer/params/train_params.inc"
#undef PLRANK_TRAIN_PARAM

  // Names given (on the command line, as key=value, or as a param) rather
  // than left at their defaults.
  std::set<std::string, std::less<>> given;
  bool WasGiven(absl::string_view name) const {
    return given.find(name) != given.end();
  }
};

// Sets `name` from `text` in its flag syntax ("0.05", "true", "1,3,10") and
// marks it given. NotFound for a name that is not a training parameter,
// InvalidArgument naming it ("parameter trees='abc': ...") for a value of
// the wrong syntax.
absl::Status SetTrainParam(absl::string_view name, absl::string_view text,
                           TrainParamValues* values);

// Every parameter's value in flag syntax, in the table's order: what the
// artifact records (canonical: "0.1" whether "0.10" or "1e-1" was given).
std::vector<std::pair<std::string, std::string>> TrainParamTexts(
    const TrainParamValues& values);

}  // namespace plrank::cli

#endif  // PLRANK_TRAINER_PARAMS_TRAIN_PARAMS_H_
