#include "trainer/cli/cli_common.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>

#include "absl/flags/internal/parse.h"
#include "absl/strings/str_join.h"
#include "trainer/cli/key_value_args.h"
#include "common/program.h"

namespace plrank::cli {
namespace {
std::string& ProgramName() {
  static std::string name = "plrank";
  return name;
}

// Flags set by key=value arguments or a config file.
std::vector<std::string>& SetByKeyValue() {
  static auto* names = new std::vector<std::string>();
  return *names;
}
}  // namespace

void ParseFlagsOrDie(int argc, char** argv, const std::string& usage) {
  ProgramName() = ProgramShortName(argv[0]);
  std::vector<char*> remaining = ParseProgramFlags(argc, argv, usage);
  if (remaining.size() > 1) {
    std::vector<std::string> extra(remaining.begin() + 1, remaining.end());
    std::fprintf(stderr, "%s: error: unexpected argument(s): %s (see --help)\n",
                 ProgramName().c_str(), absl::StrJoin(extra, " ").c_str());
    std::exit(2);
  }
}

void ParseFlagsAndKeyValuesOrDie(int argc, char** argv,
                                 const std::string& usage,
                                 const std::vector<std::string>& flag_names) {
  ProgramName() = ProgramShortName(argv[0]);
  std::vector<char*> remaining = ParseProgramFlags(
      argc, argv,
      usage + "\n\nLightGBM's habits: key=value arguments (plrank-train's "
              "flag names or LightGBM's parameter names, e.g. num_leaves=15) "
              "and config=FILE (LightGBM's config-file syntax, # comments) "
              "set flags too; --flags and key=value override the config "
              "file (docs/lightgbm-habits.md).");
  const std::vector<std::string> positional(remaining.begin() + 1,
                                            remaining.end());
  absl::StatusOr<std::vector<std::string>> applied = ApplyKeyValueArgs(
      positional, flag_names, [](absl::string_view name) {
        return absl::flags_internal::WasPresentOnCommandLine(name);
      });
  if (!applied.ok()) {
    std::fprintf(stderr, "%s: error: %s\n", ProgramName().c_str(),
                 std::string(applied.status().message()).c_str());
    std::exit(2);
  }
  SetByKeyValue() = *std::move(applied);
}

bool FlagWasGiven(absl::string_view name) {
  if (absl::flags_internal::WasPresentOnCommandLine(name)) return true;
  const std::vector<std::string>& set = SetByKeyValue();
  return std::find(set.begin(), set.end(), name) != set.end();
}

int RunOrFailOnOutOfMemory(const std::function<int()>& body) {
  // The process boundary: core code reports errors as statuses, but an
  // allocation can still throw; it must not end in std::terminate.
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(absl::ResourceExhaustedError(
        "out of memory (an allocation failed); the inputs are too large for "
        "this process's memory limit"));
  } catch (const std::length_error&) {
    return Fail(absl::ResourceExhaustedError(
        "out of memory (a size beyond what can be allocated)"));
  }
}

void SetProgramName(const std::string& name) { ProgramName() = name; }

const std::string& ProgramNameForMessages() { return ProgramName(); }

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "%s: error: %s\n", ProgramName().c_str(),
               std::string(status.message()).c_str());
  return 1;
}

}  // namespace plrank::cli
