#ifndef PLRANK_TRAINER_CLI_CLI_COMMON_H_
#define PLRANK_TRAINER_CLI_CLI_COMMON_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace plrank::cli {

// Parses absl flags; an unknown flag or a stray positional argument prints
// one clear message and exits with status 2. Returns nothing on success.
void ParseFlagsOrDie(int argc, char** argv, const std::string& usage);

// Prints "<program>: error: <message>" to stderr and returns exit code 1.
int Fail(const absl::Status& status);

}  // namespace plrank::cli

#endif  // PLRANK_TRAINER_CLI_CLI_COMMON_H_
