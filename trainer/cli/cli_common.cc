#include "trainer/cli/cli_common.h"

#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"

namespace plrank::cli {
namespace {
std::string& ProgramName() {
  static std::string name = "plrank";
  return name;
}
}  // namespace

void ParseFlagsOrDie(int argc, char** argv, const std::string& usage) {
  std::string program = argv[0];
  if (auto slash = program.rfind('/'); slash != std::string::npos) {
    program = program.substr(slash + 1);
  }
  ProgramName() = program;
  absl::SetProgramUsageMessage(usage);
  // absl only lists flags of a file named after the binary by default; our
  // binaries are plrank-<x> built from plrank_<x>.cc plus shared flag files.
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "trainer/") ||
           absl::StrContains(file, "bench/");
  };
  usage_config.contains_helpshort_flags = usage_config.contains_help_flags;
  usage_config.version_string = [] { return std::string("plrank 0.1.0\n"); };
  absl::SetFlagsUsageConfig(usage_config);
  std::vector<char*> remaining = absl::ParseCommandLine(argc, argv);
  if (remaining.size() > 1) {
    std::vector<std::string> extra(remaining.begin() + 1, remaining.end());
    std::fprintf(stderr, "%s: error: unexpected argument(s): %s (see --help)\n",
                 program.c_str(), absl::StrJoin(extra, " ").c_str());
    std::exit(2);
  }
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

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "%s: error: %s\n", ProgramName().c_str(),
               std::string(status.message()).c_str());
  return 1;
}

}  // namespace plrank::cli
