// Checkpoints and resuming (docs/distributed-sharding.md), single-process:
// a run killed mid-training and restarted with --resume writes the model an
// uninterrupted run writes (trees, scores and history bit for bit), and a
// checkpoint of another run, or a damaged one, is refused naming the file.
// The distributed counterpart is tests/distributed (resume_np2).
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;

class CheckpointCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = dir_.File("data");
    const CommandResult gen = RunCommand(
        {BinPath("plrank-datagen"), "--queries=120", "--mean_docs=15",
         "--features=10", "--seed=5", "--out_prefix=" + prefix_});
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
  }

  // xendcg draws a random stream per iteration (objective state), bagging
  // every 3 iterations and feature subsets per tree: all must resume.
  CommandResult Train(const std::string& name, const std::string& checkpoints,
                      const std::vector<std::string>& extra,
                      const testing::EnvVars& env = {}) {
    std::vector<std::string> argv = {
        BinPath("plrank-train"), "--train=" + prefix_ + ".train",
        "--valid=" + prefix_ + ".vali", "--model_out=" + dir_.File(name + ".pb"),
        "--history_out=" + dir_.File(name + ".json"), "--objective=xendcg",
        "--trees=14", "--leaves=7", "--min_data_in_leaf=5",
        "--bagging_fraction=0.7", "--bagging_freq=3", "--feature_fraction=0.8",
        "--num_threads=2", "--quiet", "--checkpoint_dir=" + checkpoints,
        "--checkpoint_every=3"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv, env);
  }

  std::string Output(const std::vector<std::string>& argv) {
    const CommandResult result = RunCommand(argv);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out;
  }

  std::string Dump(const std::string& name) {
    return Output({BinPath("plrank-eval"), "--model=" + dir_.File(name + ".pb"),
                   "--dump"});
  }

  std::string Scores(const std::string& name) {
    const std::string out = dir_.File(name + ".scores");
    Output({BinPath("plrank-eval"), "--model=" + dir_.File(name + ".pb"),
            "--data=" + prefix_ + ".test", "--scores_out=" + out});
    return ReadWholeFile(out);
  }

  TempDir dir_;
  std::string prefix_;
};

// Strips what differs between runs whatever the code: creation time, output
// paths, timings (as scripts/objective_outputs.sh does).
std::string WithoutTimes(const std::string& text) {
  std::string kept;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    bool keep = true;
    for (const char* word : {"created", "seconds", "elapsed", "\"path\"",
                             "model_out", "history_out", "quiet ="}) {
      keep = keep && line.find(word) == std::string::npos;
    }
    if (keep) {
      kept += line + "\n";
    }
    begin = end + 1;
  }
  return kept;
}

TEST_F(CheckpointCliTest, AKilledRunResumedWritesTheUninterruptedModel) {
  ASSERT_EQ(Train("whole", dir_.File("whole-ckpt"), {}).exit_code, 0);

  const std::string checkpoints = dir_.File("ckpt");
  // Killed right after iteration 7: the last checkpoint is iteration 6's.
  const CommandResult killed = Train(
      "resumed", checkpoints, {}, {{"PLRANK_TEST_KILL_AFTER_ITERATION", "7"}});
  EXPECT_EQ(killed.exit_code, -SIGKILL) << killed.err;
  ASSERT_TRUE(std::filesystem::exists(checkpoints + "/checkpoint.plrank"));
  EXPECT_FALSE(std::filesystem::exists(dir_.File("resumed.pb")));

  std::vector<std::string> resume = {"--resume"};
  resume.push_back("--quiet=false");
  const CommandResult resumed = Train("resumed", checkpoints, resume);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_THAT(resumed.out, HasSubstr("after iteration 6 of 14"));

  EXPECT_EQ(WithoutTimes(Dump("resumed")), WithoutTimes(Dump("whole")));
  EXPECT_EQ(Scores("resumed"), Scores("whole"));
  EXPECT_EQ(WithoutTimes(ReadWholeFile(dir_.File("resumed.json"))),
            WithoutTimes(ReadWholeFile(dir_.File("whole.json"))));

  // Resuming a finished run changes nothing.
  ASSERT_EQ(Train("again", checkpoints, {"--resume", "--checkpoint_every=1"})
                .exit_code,
            0);
  EXPECT_EQ(Scores("again"), Scores("whole"));
}

TEST_F(CheckpointCliTest, ResumeWithoutACheckpointStartsFromTheBeginning) {
  ASSERT_EQ(Train("plain", dir_.File("unused"), {}).exit_code, 0);
  ASSERT_EQ(Train("fresh", dir_.File("empty"), {"--resume"}).exit_code, 0);
  EXPECT_EQ(Scores("fresh"), Scores("plain"));
}

TEST_F(CheckpointCliTest, ACheckpointOfAnotherRunOrDamagedIsRefused) {
  const std::string checkpoints = dir_.File("ckpt");
  ASSERT_EQ(Train("first", checkpoints, {}).exit_code, 0);
  CommandResult other =
      Train("other", checkpoints, {"--resume", "--learning_rate=0.05"});
  EXPECT_NE(other.exit_code, 0);
  EXPECT_THAT(other.err, HasSubstr(checkpoints + "/checkpoint.plrank"));
  EXPECT_THAT(other.err, HasSubstr("another run"));

  std::string bytes = ReadWholeFile(checkpoints + "/checkpoint.plrank");
  bytes[bytes.size() / 2] ^= 1;
  std::ofstream(checkpoints + "/checkpoint.plrank", std::ios::binary) << bytes;
  CommandResult damaged = Train("damaged", checkpoints, {"--resume"});
  EXPECT_NE(damaged.exit_code, 0);
  EXPECT_THAT(damaged.err, HasSubstr("not a usable checkpoint"));

  CommandResult no_dir = RunCommand(
      {BinPath("plrank-train"), "--train=" + prefix_ + ".train",
       "--model_out=" + dir_.File("x.pb"), "--resume"});
  EXPECT_NE(no_dir.exit_code, 0);
  EXPECT_THAT(no_dir.err, HasSubstr("--resume needs --checkpoint_dir"));
}

TEST_F(CheckpointCliTest, ARankPlaceholderNamesRankZerosFileSingleProcess) {
  std::filesystem::copy_file(prefix_ + ".train", dir_.File("part-0-of-1.txt"));
  const CommandResult sharded = RunCommand(
      {BinPath("plrank-train"), "--train=" + dir_.File("part-{rank}-of-{ranks}.txt"),
       "--model_out=" + dir_.File("sharded.pb"), "--trees=5", "--quiet"});
  ASSERT_EQ(sharded.exit_code, 0) << sharded.err;
  const CommandResult plain = RunCommand(
      {BinPath("plrank-train"), "--train=" + prefix_ + ".train",
       "--model_out=" + dir_.File("plain.pb"), "--trees=5", "--quiet"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(Scores("sharded"), Scores("plain"));
}

}  // namespace
}  // namespace plrank
