#include "trainer/cli/cli_common.h"

#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>

#include "absl/strings/str_join.h"
#include "common/program.h"

namespace plrank::cli {
namespace {
std::string& ProgramName() {
  static std::string name = "plrank";
  return name;
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
