// The command-line programs as users and scripts call them: bad input gives
// one clear message and a non-zero exit; good input gives reproducible,
// atomically written models.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"
#include "tests/unit/server/test_models.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::TempDir;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = dir_.File("data");
    const CommandResult gen = RunCommand(
        {BinPath("plrank-datagen"), "--queries=80", "--mean_docs=25",
         "--features=20", "--seed=3", "--out_prefix=" + prefix_});
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
  }

  CommandResult Train(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {BinPath("plrank-train"),
                                     "--train=" + prefix_ + ".train",
                                     "--trees=15", "--leaves=7",
                                     "--min_data_in_leaf=5", "--quiet"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  }

  TempDir dir_;
  std::string prefix_;
};

// The default is the tie-group likelihood over the whole ranking; --pl_paper
// is the paper's sampled top-10 and refuses flags it fixes.
TEST_F(CliTest, PlackettLuceDefaultAndPaperSwitch) {
  auto train_verbose = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {
        BinPath("plrank-train"), "--train=" + prefix_ + ".train",
        "--trees=2", "--leaves=4", "--model_out=" + dir_.File("pl.pb")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  };
  const CommandResult by_default = train_verbose({});
  ASSERT_EQ(by_default.exit_code, 0) << by_default.err;
  EXPECT_THAT(by_default.out,
              HasSubstr("plrank: tie groups (efron), weighting uniform, top-k "
                        "all, stop at lowest label yes, leaf step damping "
                        "0.01 clip 1;"));
  const CommandResult paper = train_verbose({"--pl_paper", "--pl_permutations=3"});
  ASSERT_EQ(paper.exit_code, 0) << paper.err;
  EXPECT_THAT(paper.out, HasSubstr("plrank: top-k 10, permutations 3, skip tied "
                                   "queries no, stop at lowest label no"));
  const CommandResult conflict = train_verbose({"--pl_paper", "--pl_topk=5"});
  EXPECT_NE(conflict.exit_code, 0);
  EXPECT_THAT(conflict.err, HasSubstr("--pl_paper fixes --pl_topk"));
  const CommandResult sampled_efron = train_verbose({"--pl_permutations=3"});
  EXPECT_NE(sampled_efron.exit_code, 0);
  EXPECT_THAT(sampled_efron.err, HasSubstr("pl_ties=permutation"));
}

// A 16M feature index in a small file: one message, no abort.
TEST_F(CliTest, HugeFeatureIndexFailsWithFileAndLine) {
  const std::string hostile = dir_.File("hostile.txt");
  WriteFile(hostile, "1 qid:1 1:0.5 2:1\n0 qid:1 16777216:0.5\n");
  const CommandResult result = RunCommand(
      {BinPath("plrank-train"), "--train=" + hostile,
       "--model_out=" + dir_.File("h.pb")});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_THAT(result.err, HasSubstr("hostile.txt:2"));
  EXPECT_THAT(result.err, HasSubstr("--max_feature_index=100000"));
}

TEST_F(CliTest, UnknownFlagIsRejected) {
  const CommandResult result = Train({"--no_such_flag=1"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.err, HasSubstr("no_such_flag"));
}

TEST_F(CliTest, MissingInputsAreNamed) {
  CommandResult result = Train({"--model_out=" + dir_.File("m.pb"),
                                "--train=" + dir_.File("absent.txt")});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.err, HasSubstr("absent.txt"));

  result = RunCommand({BinPath("plrank-train"), "--train=" + prefix_ + ".train"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.err, HasSubstr("--model_out"));

  result = RunCommand({BinPath("plrank-eval"), "--model=" + dir_.File("nope.pb"),
                       "--data=" + prefix_ + ".test"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.err, HasSubstr("nope.pb"));
}

TEST_F(CliTest, EmptyAndMalformedDataAreRejectedWithFileAndLine) {
  WriteFile(dir_.File("empty.txt"), "");
  CommandResult result = Train({"--model_out=" + dir_.File("m.pb"),
                                "--train=" + dir_.File("empty.txt")});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.err, HasSubstr("empty.txt"));

  WriteFile(dir_.File("bad.txt"),
            "1 qid:1 1:0.5 2:0.1\n0 qid:1 1:abc 2:0.3\n");
  result = Train({"--model_out=" + dir_.File("m.pb"),
                  "--train=" + dir_.File("bad.txt")});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.err, HasSubstr("bad.txt:2"));
  EXPECT_FALSE(std::filesystem::exists(dir_.File("m.pb")));
}

TEST_F(CliTest, EvalRejectsCorruptModelsAndWrongFeatureCounts) {
  const std::string model = dir_.File("m.pb");
  ASSERT_EQ(Train({"--model_out=" + model}).exit_code, 0);

  std::string bytes = ReadWholeFile(model);
  WriteFile(dir_.File("half.pb"), bytes.substr(0, bytes.size() / 2));
  CommandResult result = RunCommand({BinPath("plrank-eval"),
                                     "--model=" + dir_.File("half.pb"),
                                     "--data=" + prefix_ + ".test"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.err, HasSubstr("half.pb"));

  WriteFile(dir_.File("wide.txt"), "1 qid:7 1:0.5 21:0.25\n0 qid:7 1:0.1\n");
  result = RunCommand({BinPath("plrank-eval"), "--model=" + model,
                       "--data=" + dir_.File("wide.txt")});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.err, HasSubstr("wide.txt:1"));
}

// A model file is untrusted input: a declared feature count beyond the cap
// is one clear error, and one within it that the data cannot be widened to
// says where the width comes from; neither aborts.
TEST_F(CliTest, ModelsDeclaringHugeFeatureCountsGiveOneClearError) {
  const std::string huge = dir_.File("huge.pb");
  WriteFile(huge, testing::ModelBytesDeclaringFeatures(testing::TestEnsemble(1),
                                                       50000000));
  CommandResult result = RunCommand({BinPath("plrank-eval"), "--model=" + huge,
                                     "--data=" + prefix_ + ".test"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err,
              AllOf(HasSubstr("huge.pb"),
                    HasSubstr("num_features 50000000 is above the limit")));
  result = Train({"--model_out=" + dir_.File("m.pb"), "--init_model=" + huge});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("num_features 50000000 is above the limit"));

  // 2^24 declared features (the cap), 2 read by the trees, under a 3 GB
  // address-space limit.
  const std::string wide = dir_.File("wide.pb");
  WriteFile(wide, testing::ModelBytesDeclaringFeatures(
                      testing::TestEnsemble(1), kMaxModelFeatures));
  const std::string limit = "ulimit -v 3000000; exec ";
  result = RunCommand({"/bin/sh", "-c",
                       limit + BinPath("plrank-eval") + " --model=" + wide +
                           " --data=" + prefix_ + ".test"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err,
              AllOf(HasSubstr("the width, 16777216 features, is the feature "
                              "count of model " + wide),
                    Not(HasSubstr("terminate"))));
  result = RunCommand({"/bin/sh", "-c",
                       limit + BinPath("plrank-train") + " --train=" + prefix_ +
                           ".train --quiet --trees=2 --model_out=" +
                           dir_.File("m.pb") + " --init_model=" + wide});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("is the feature count of --init_model " +
                                    wide));
}

TEST_F(CliTest, ScoresDoNotDependOnThreadCount) {
  std::vector<std::string> scores;
  for (const char* threads : {"1", "2"}) {
    const std::string model = dir_.File(std::string("m") + threads + ".pb");
    const std::string out = dir_.File(std::string("s") + threads + ".txt");
    ASSERT_EQ(Train({"--model_out=" + model, "--pl_ties=permutation",
                     "--pl_permutations=3",
                     std::string("--num_threads=") + threads})
                  .exit_code,
              0);
    const CommandResult eval =
        RunCommand({BinPath("plrank-eval"), "--model=" + model,
                    "--data=" + prefix_ + ".test", "--scores_out=" + out});
    ASSERT_EQ(eval.exit_code, 0) << eval.err;
    scores.push_back(ReadWholeFile(out));
  }
  EXPECT_FALSE(scores[0].empty());
  EXPECT_EQ(scores[0], scores[1]);
}

TEST_F(CliTest, ContinuesFromABackgroundModelAndComparesModels) {
  const std::string base = dir_.File("base.pb");
  const std::string more = dir_.File("more.pb");
  ASSERT_EQ(Train({"--model_out=" + base}).exit_code, 0);
  const CommandResult cont = Train({"--model_out=" + more, "--init_model=" + base});
  ASSERT_EQ(cont.exit_code, 0) << cont.err;

  const CommandResult dump =
      RunCommand({BinPath("plrank-eval"), "--model=" + more, "--dump"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_THAT(dump.out, HasSubstr("tree 29"));
  EXPECT_THAT(dump.out, Not(HasSubstr("tree 30")));

  const CommandResult compare = RunCommand(
      {BinPath("plrank-eval"), "--model=" + more, "--compare_with=" + base,
       "--data=" + prefix_ + ".test"});
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_THAT(compare.out, AllOf(HasSubstr("ndcg@10"), HasSubstr("p")));
}

TEST_F(CliTest, KilledTrainerNeverLeavesAHalfModel) {
  // A big enough run to be killed mid-way; the target holds an older model.
  const std::string big = dir_.File("big");
  ASSERT_EQ(RunCommand({BinPath("plrank-datagen"), "--queries=1500",
                        "--mean_docs=60", "--features=60", "--seed=5",
                        "--out=" + big})
                .exit_code,
            0);
  const std::string model = dir_.File("m.pb");
  ASSERT_EQ(Train({"--model_out=" + model}).exit_code, 0);
  const std::string before = ReadWholeFile(model);
  for (int delay_ms : {50, 300, 900}) {
    const pid_t pid = ::plrank::testing::StartCommand(
        {BinPath("plrank-train"), "--train=" + big, "--trees=2000",
         "--quiet", "--model_out=" + model},
        dir_.File("out"), dir_.File("err"));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kill(pid, SIGKILL);
    ::plrank::testing::WaitForExit(pid);
    EXPECT_EQ(ReadWholeFile(model), before) << "after " << delay_ms << " ms";
  }
}

}  // namespace
}  // namespace plrank
