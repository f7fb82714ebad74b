#ifndef PLRANK_TRAINER_CLI_KEY_VALUE_ARGS_H_
#define PLRANK_TRAINER_CLI_KEY_VALUE_ARGS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace plrank::cli {

// LightGBM's command-line habits for plrank-train (docs/lightgbm-habits.md):
//   plrank-train num_leaves=15 learning_rate=0.05 data=train.txt ...
//   plrank-train config=train.conf [key=value ...] [--flag=value ...]
// A key is a plrank-train flag name or a LightGBM parameter name
// (common/lightgbm_params.h translates it, or refuses it with the reason).

// One key=value setting and where it came from, for messages:
// "train.conf:3" or "argument 'num_leaves=15'".
struct KeyValueArg {
  std::string key;
  std::string value;
  std::string origin;
};

// The largest config file read (a config is a few dozen lines).
inline constexpr size_t kMaxConfigFileBytes = size_t{1} << 20;

// LightGBM's config-file syntax: one `key = value` per line, spaces around
// either side ignored, `#` starts a comment (whole line or the rest of a
// line), blank lines ignored. A line without '=' or with an empty key is
// InvalidArgument naming `path` and the line.
absl::StatusOr<std::vector<KeyValueArg>> ParseConfigText(
    absl::string_view text, const std::string& path);
absl::StatusOr<std::vector<KeyValueArg>> ReadConfigFile(
    const std::string& path);

// Applies the positional arguments of plrank-train: each must be
// `key=value`; `config=FILE` (or config_file=FILE) reads FILE's settings
// first. Precedence, as in LightGBM: a config file's settings are
// overridden by the command line's `key=value` and `--flag`s; the same
// flag given by a `key=value` and a `--flag`, or twice in one place, with
// different values, is an error naming both. `flag_names` are the
// program's flags; `given_as_flag(name)` says whether --name was on the
// command line (or in a --flagfile). Returns the flag names it set.
// Errors name the argument or the file and line.
absl::StatusOr<std::vector<std::string>> ApplyKeyValueArgs(
    const std::vector<std::string>& positional,
    const std::vector<std::string>& flag_names,
    const std::function<bool(absl::string_view)>& given_as_flag);

}  // namespace plrank::cli

#endif  // PLRANK_TRAINER_CLI_KEY_VALUE_ARGS_H_
