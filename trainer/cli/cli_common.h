#ifndef PLRANK_TRAINER_CLI_CLI_COMMON_H_
#define PLRANK_TRAINER_CLI_CLI_COMMON_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace plrank::cli {

// Parses absl flags; an unknown flag or a stray positional argument prints
// one clear message and exits with status 2. Returns nothing on success.
void ParseFlagsOrDie(int argc, char** argv, const std::string& usage);

// As ParseFlagsOrDie, and positional `key=value` arguments and
// `config=FILE` set flags too (LightGBM's habits: ApplyKeyValueArgs,
// trainer/cli/key_value_args.h); `flag_names` are the program's flags. An
// error in them prints one message and exits with status 2.
void ParseFlagsAndKeyValuesOrDie(int argc, char** argv,
                                 const std::string& usage,
                                 const std::vector<std::string>& flag_names);

// Whether flag `name` was given rather than left at its default: on the
// command line, in a --flagfile, or (after ParseFlagsAndKeyValuesOrDie) as
// key=value or in a config file.
bool FlagWasGiven(absl::string_view name);

// Prints "<program>: error: <message>" to stderr and returns exit code 1.
int Fail(const absl::Status& status);

// The name Fail() puts before its messages (ParseFlagsOrDie sets it from
// argv[0]); e.g. "plrank-train (rank 1 of 3)" in a distributed run.
void SetProgramName(const std::string& name);
const std::string& ProgramNameForMessages();

// Runs a program's body and returns its exit code; running out of memory
// (std::bad_alloc, e.g. on a model or data file that declares huge sizes)
// becomes one Fail() message instead of an abort.
int RunOrFailOnOutOfMemory(const std::function<int()>& body);

}  // namespace plrank::cli

#endif  // PLRANK_TRAINER_CLI_CLI_COMMON_H_
