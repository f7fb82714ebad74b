#include "trainer/cli/cli_common.h"

#include <cstdio>
#include <cstdlib>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
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
  std::vector<char*> positional;
  std::vector<absl::UnrecognizedFlag> unrecognized;
  std::vector<char*> remaining = absl::ParseCommandLine(argc, argv);
  if (remaining.size() > 1) {
    std::vector<std::string> extra(remaining.begin() + 1, remaining.end());
    std::fprintf(stderr, "%s: error: unexpected argument(s): %s (see --help)\n",
                 program.c_str(), absl::StrJoin(extra, " ").c_str());
    std::exit(2);
  }
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "%s: error: %s\n", ProgramName().c_str(),
               std::string(status.message()).c_str());
  return 1;
}

}  // namespace plrank::cli
