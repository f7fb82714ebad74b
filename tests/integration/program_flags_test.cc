// Every program's --help lists its own flags (whichever file defines them),
// --version prints one line in the shared format, and an unknown flag names
// the nearest one: the real binaries, as users run them.
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::RunCommand;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

struct Program {
  std::string name;
  std::vector<std::string> flags;  // some of its own flags --help must list
  bool always_built;               // false: a benchmark, built optionally
};

std::vector<Program> Programs() {
  return {
      {"plrank-train", {"model_out", "eval_at", "pl_stop_at_lowest_label",
                        "duplicate_features", "empty_query_ndcg"}, true},
      {"plrank-eval", {"model", "err_max_grade", "num_features"}, true},
      {"plrank-datagen", {"out_prefix", "regime"}, true},
      {"plrank-convert", {"lightgbm_model", "xgboost_json"}, true},
      {"plrank-server", {"model_base_path", "admin_from_any", "tls_ca_file"},
       true},
      {"plrank-client", {"target", "empty_query_ndcg", "model_version"}, true},
      {"plrank-loadgen", {"target", "concurrency"}, true},
      {"plrank-echo-server", {"port", "max_message_bytes"}, true},
      {"plrank-repro", {"folds_dir", "systems"}, false},
      {"plrank-bench-train", {"trees"}, false},
      {"plrank-bench-parse", {"repeats"}, false},
      {"plrank-bench-quality", {"plrank_variants"}, false},
      {"plrank-xgb-peer", {"scores_out"}, false},
  };
}

TEST(ProgramFlagsTest, HelpListsEveryProgramsOwnFlags) {
  for (const Program& program : Programs()) {
    const std::string path = BinPath(program.name);
    if (!std::filesystem::exists(path)) {
      EXPECT_FALSE(program.always_built) << path << " is not built";
      continue;
    }
    const CommandResult help = RunCommand({path, "--help"});
    // Asking for help is not an error (absl alone exits 1).
    EXPECT_EQ(help.exit_code, 0) << program.name << help.err;
    EXPECT_THAT(help.out, Not(HasSubstr("No flags matched"))) << program.name;
    // Flag files are documented in every program's usage.
    EXPECT_THAT(help.out, HasSubstr("--flagfile=F reads one --flag=value"))
        << program.name;
    for (const std::string& flag : program.flags) {
      EXPECT_THAT(help.out, HasSubstr("--" + flag + " ("))
          << program.name << " --help:\n" << help.out;
    }
    // absl's own flags are not listed as the program's.
    EXPECT_THAT(help.out, Not(HasSubstr("--flagfile ("))) << program.name;
  }
}

TEST(ProgramFlagsTest, HelpShowsTheTrueDefaultOfStopAtLowestLabel) {
  const CommandResult help = RunCommand({BinPath("plrank-train"), "--help"});
  const size_t flag = help.out.find("--pl_stop_at_lowest_label (");
  ASSERT_NE(flag, std::string::npos) << help.out;
  const size_t default_at = help.out.find("default: ", flag);
  ASSERT_NE(default_at, std::string::npos);
  EXPECT_EQ(help.out.substr(default_at, 14), "default: true;");
}

TEST(ProgramFlagsTest, VersionIsOneLineInOneFormat) {
  for (const Program& program : Programs()) {
    const std::string path = BinPath(program.name);
    if (!std::filesystem::exists(path)) continue;
    const CommandResult version = RunCommand({path, "--version"});
    EXPECT_EQ(version.exit_code, 0) << program.name << version.err;
    EXPECT_THAT(version.out,
                MatchesRegex(program.name +
                             " [0-9]+\\.[0-9]+\\.[0-9]+ \\((Release|Debug|"
                             "RelWithDebInfo|MinSizeRel) build(, commit "
                             "[0-9a-f]+)?\\)\n"))
        << program.name;
    EXPECT_THAT(version.out, Not(HasSubstr("NDEBUG")));
  }
}

TEST(ProgramFlagsTest, UnknownFlagNamesTheNearestOne) {
  const CommandResult server =
      RunCommand({BinPath("plrank-server"), "--model_base_pth=/nowhere"});
  EXPECT_EQ(server.exit_code, 2);
  EXPECT_THAT(server.err,
              HasSubstr("plrank-server: error: unknown flag --model_base_pth; "
                        "did you mean --model_base_path?"));
  const CommandResult client =
      RunCommand({BinPath("plrank-client"), "--targte=x:1", "list"});
  EXPECT_EQ(client.exit_code, 2);
  EXPECT_THAT(client.err, HasSubstr("did you mean --target?"));
  const CommandResult far =
      RunCommand({BinPath("plrank-echo-server"), "--completely_unknown=1"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_THAT(far.err, HasSubstr("unknown flag --completely_unknown (see "
                                 "--help)"));
}

}  // namespace
}  // namespace plrank
