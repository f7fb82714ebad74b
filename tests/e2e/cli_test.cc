// The command-line programs as users and scripts call them: bad input gives
// one clear message and a non-zero exit; good input gives reproducible,
// atomically written models.
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

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

  // Names in the test directory starting with `prefix`.
  std::vector<std::string> Temporaries(const std::string& prefix) const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(prefix, 0) == 0) names.push_back(name);
    }
    return names;
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
              // A small set: --pl_weighting=auto picks uniform weights.
              HasSubstr("plrank: tie groups (efron), weighting uniform, top-k "
                        "all, stop at lowest label yes, leaf step damping "
                        "0.03 clip 0.6;"));
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

// A --pl_paper model says what trained it: its artifact and --dump record
// the paper's settings, not the flags' defaults (product settings) that the
// preset replaced.
TEST_F(CliTest, PaperModelRecordsThePapersSettings) {
  const std::string model = dir_.File("paper.pb");
  const CommandResult train = RunCommand(
      {BinPath("plrank-train"), "--train=" + prefix_ + ".train", "--trees=2",
       "--leaves=4", "--pl_paper", "--model_out=" + model});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const CommandResult dump =
      RunCommand({BinPath("plrank-eval"), "--model=" + model, "--dump"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  for (const char* line :
       {"  pl_paper = true\n", "  pl_topk = 10\n", "  pl_ties = permutation\n",
        "  pl_weighting = uniform\n", "  pl_stop_at_lowest_label = false\n",
        "  pl_newton_damping = 1e-06\n", "  pl_max_leaf_step = 100\n",
        "  pl_normalize_queries = false\n", "  pl_diagonal_leaf_step = false\n",
        "  pl_skip_tied_queries = false\n", "  split_gain = ls\n",
        "  learning_rate = 0.1\n"}) {
    EXPECT_THAT(dump.out, HasSubstr(line));
  }
  EXPECT_THAT(dump.out, Not(HasSubstr("pl_max_leaf_step = 0.6")));
  EXPECT_THAT(dump.out, Not(HasSubstr("pl_newton_damping = 0.03")));
}

// --learning_rate not given: PLRank picks it from the training data (0.2
// from 50,000 documents at 100 trees or fewer), says so and records it;
// given, the flag is the rate, with no note.
TEST_F(CliTest, AutoLearningRateIsLoggedAndRecorded) {
  const std::string large = dir_.File("large.txt");
  const CommandResult gen =
      RunCommand({BinPath("plrank-datagen"), "--queries=500", "--features=6",
                  "--seed=4", "--out=" + large});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  auto train = [&](const std::string& data, std::vector<std::string> extra) {
    std::vector<std::string> argv = {BinPath("plrank-train"),
                                     "--train=" + data,
                                     "--trees=2",
                                     "--leaves=4",
                                     "--num_threads=1",
                                     "--model_out=" + dir_.File("lr.pb")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const CommandResult run = RunCommand(argv);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    const CommandResult dump = RunCommand(
        {BinPath("plrank-eval"), "--model=" + dir_.File("lr.pb"), "--dump"});
    EXPECT_EQ(dump.exit_code, 0) << dump.err;
    return std::make_pair(run.out, dump.out);
  };
  const auto [large_log, large_dump] = train(large, {});
  EXPECT_THAT(large_log, HasSubstr("learning rate 0.2 (auto from "));
  EXPECT_THAT(large_dump, HasSubstr("learning_rate = 0.2\n"));
  const auto [small_log, small_dump] = train(prefix_ + ".train", {});
  EXPECT_THAT(small_log, HasSubstr("learning rate 0.1 (auto from "));
  EXPECT_THAT(small_dump, HasSubstr("learning_rate = 0.1\n"));
  const auto [given_log, given_dump] = train(large, {"--learning_rate=0.05"});
  EXPECT_THAT(given_log, Not(HasSubstr("(auto from")));
  EXPECT_THAT(given_dump, HasSubstr("learning_rate = 0.05\n"));
  const auto [other_log, other_dump] = train(large, {"--objective=lambdamart"});
  EXPECT_THAT(other_log, Not(HasSubstr("(auto from")));
  EXPECT_THAT(other_dump, HasSubstr("learning_rate = 0.1\n"));
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

// Model files hold text as UTF-8; a data file whose name is not (Latin-1
// "caf\xe9") still trains, and the model it writes loads: the recorded flag
// value is C-escaped.
TEST_F(CliTest, FileNamesThatAreNotUtf8AreRecordedEscaped) {
  const std::string latin1 = dir_.File("caf\xe9.train");
  WriteFile(latin1, ReadWholeFile(prefix_ + ".train"));
  const std::string model = dir_.File("latin1.plrank");
  const CommandResult train = RunCommand(
      {BinPath("plrank-train"), "--train=" + latin1, "--trees=3", "--leaves=4",
       "--min_data_in_leaf=5", "--quiet", "--model_out=" + model});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const std::string bytes = ReadWholeFile(model);
  EXPECT_THAT(bytes, HasSubstr("caf\\xe9.train"));
  EXPECT_THAT(bytes, Not(HasSubstr("caf\xe9.train")));
  const CommandResult eval =
      RunCommand({BinPath("plrank-eval"), "--model=" + model,
                  "--data=" + prefix_ + ".test"});
  EXPECT_EQ(eval.exit_code, 0) << eval.err;
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
  EXPECT_THAT(result.err,
              HasSubstr("20 features, but the background model " + wide +
                        " has 16777216"));
}

// Issue 39 item 11: --init_model of a 300-feature model on 46-feature data
// trained silently (the data was padded to the model's width). A width
// that does not fit is one error naming both counts; --num_features makes
// the padding explicit.
TEST_F(CliTest, BackgroundModelWidthMustFitTheData) {
  const std::string base = dir_.File("base.pb");
  ASSERT_EQ(Train({"--model_out=" + base}).exit_code, 0);  // 20 features
  for (const char* features : {"12", "26"}) {
    const std::string prefix = dir_.File(std::string("w") + features);
    ASSERT_EQ(RunCommand({BinPath("plrank-datagen"), "--queries=20",
                          "--mean_docs=10", std::string("--features=") + features,
                          "--seed=4", "--out_prefix=" + prefix})
                  .exit_code,
              0);
    const CommandResult result = RunCommand(
        {BinPath("plrank-train"), "--train=" + prefix + ".train", "--trees=2",
         "--quiet", "--model_out=" + dir_.File("m.pb"), "--init_model=" + base});
    EXPECT_EQ(result.exit_code, 1) << features;
    EXPECT_THAT(result.err, HasSubstr(prefix + ".train: " + features +
                                      " features, but the background model " +
                                      base + " has 20"));
    EXPECT_FALSE(std::filesystem::exists(dir_.File("m.pb")));
  }
  const CommandResult padded = RunCommand(
      {BinPath("plrank-train"), "--train=" + dir_.File("w12") + ".train",
       "--trees=2", "--min_data_in_leaf=2", "--quiet", "--num_features=20",
       "--model_out=" + dir_.File("m.pb"), "--init_model=" + base});
  EXPECT_EQ(padded.exit_code, 0) << padded.err;
}

// Issue 39 item 11: a --history_out that fails after the model is written
// exits 1, and says that the model is there.
TEST_F(CliTest, FailedHistorySaysTheModelIsWritten) {
  const std::string model = dir_.File("m.pb");
  const CommandResult result =
      Train({"--model_out=" + model,
             "--history_out=" + dir_.File("no-such-dir/h.json")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err,
              AllOf(HasSubstr("no-such-dir/h.json"),
                    HasSubstr("the model was written to " + model +
                              " (only the history is missing)")));
  EXPECT_TRUE(std::filesystem::exists(model));
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

// The trainer is killed while it writes the model, after part of the new
// bytes are on disk (PLRANK_TEST_KILL_DURING_WRITE makes the atomic writer
// SIGKILL its own process there): the target keeps the old model byte for
// byte, and the partial bytes are in a temporary beside it, which the next
// run writing the same file removes (issue 39 item 11: they stayed forever).
TEST_F(CliTest, KilledTrainerNeverLeavesAHalfModel) {
  const std::string model = dir_.File("m.pb");
  ASSERT_EQ(Train({"--model_out=" + model}).exit_code, 0);
  const std::string before = ReadWholeFile(model);
  // A different model, so a write that reached the target would show.
  const std::vector<std::string> retrain = {"--model_out=" + model,
                                            "--trees=30", "--seed=9"};
  for (const size_t bytes : {size_t{0}, size_t{100}, before.size() / 2}) {
    std::vector<std::string> argv = {BinPath("plrank-train"),
                                     "--train=" + prefix_ + ".train",
                                     "--leaves=7", "--min_data_in_leaf=5",
                                     "--quiet"};
    argv.insert(argv.end(), retrain.begin(), retrain.end());
    const CommandResult killed = RunCommand(
        argv, {{"PLRANK_TEST_KILL_DURING_WRITE", std::to_string(bytes)}});
    EXPECT_EQ(killed.exit_code, -SIGKILL) << "after " << bytes << " bytes; "
                                          << killed.err;
    EXPECT_EQ(ReadWholeFile(model), before) << "after " << bytes << " bytes";
    // The killed run's temporary (the previous killed run's was removed
    // when this one started writing).
    std::vector<std::string> temps = Temporaries("m.pb.tmp.");
    ASSERT_EQ(temps.size(), 1u) << "after " << bytes << " bytes";
    EXPECT_EQ(std::filesystem::file_size(dir_.File(temps[0])), bytes)
        << temps[0];
  }
  // Unhindered, the same run replaces the model and leaves no temporary.
  const CommandResult completed = Train(retrain);
  ASSERT_EQ(completed.exit_code, 0) << completed.err;
  EXPECT_NE(ReadWholeFile(model), before);
  EXPECT_GT(before.size() / 2, 100u);
  EXPECT_THAT(Temporaries("m.pb.tmp."), ::testing::IsEmpty());

  // plrank-convert writes through the same writer: killed, then rerun.
  const std::vector<std::string> convert = {
      BinPath("plrank-convert"), "--model=" + model,
      "--to_lightgbm=" + dir_.File("m.txt")};
  const CommandResult killed_convert =
      RunCommand(convert, {{"PLRANK_TEST_KILL_DURING_WRITE", "10"}});
  EXPECT_EQ(killed_convert.exit_code, -SIGKILL) << killed_convert.err;
  EXPECT_EQ(Temporaries("m.txt.tmp.").size(), 1u);
  const CommandResult converted = RunCommand(convert);
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  EXPECT_THAT(Temporaries("m.txt.tmp."), ::testing::IsEmpty());
}

// Every file a CLI writes goes through the atomic writer, which refuses a
// target that exists and is not a regular file instead of renaming a regular
// file over it (as root, --model_out=/dev/full used to replace the device
// node). The node is left as it was and the message names the path.
TEST_F(CliTest, OutputsRefuseTargetsThatAreNotRegularFiles) {
  const std::string model = dir_.File("m.pb");
  ASSERT_EQ(Train({"--model_out=" + model}).exit_code, 0);
  std::vector<std::pair<std::string, std::string>> targets;  // path, kind
  const std::string fifo = dir_.File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  targets.push_back({fifo, "is a FIFO"});
  const std::string directory = dir_.File("directory");
  std::filesystem::create_directory(directory);
  targets.push_back({directory, "is a directory"});
  const std::string link = dir_.File("link-to-fifo");
  std::filesystem::create_symlink(fifo, link);
  targets.push_back({link, "is a FIFO"});
  // A private copy of /dev/full's node (major 1, minor 7), where mknod is
  // allowed (root): the old writer replaced it with a regular file.
  const std::string device = dir_.File("full");
  if (mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0) {
    targets.push_back({device, "is a character device"});
  }
  const std::string xgboost_json =
      std::string(PLRANK_SOURCE_DIR) +
      "/tests/unit/import/testdata/xgb_rank_small.json";
  for (const auto& [path, kind] : targets) {
    struct stat before;
    ASSERT_EQ(lstat(path.c_str(), &before), 0) << path;
    const std::vector<std::vector<std::string>> commands = {
        {BinPath("plrank-train"), "--train=" + prefix_ + ".train",
         "--trees=2", "--model_out=" + path},
        {BinPath("plrank-datagen"), "--queries=5", "--out=" + path},
        {BinPath("plrank-convert"), "--xgboost_json=" + xgboost_json,
         "--model_out=" + path}};
    for (const std::vector<std::string>& command : commands) {
      const CommandResult result = RunCommand(command);
      EXPECT_EQ(result.exit_code, 1) << command[0] << " " << path;
      EXPECT_THAT(result.err, HasSubstr(path + ": exists and " + kind +
                                        ", not a regular file"))
          << command[0];
      struct stat after;
      ASSERT_EQ(lstat(path.c_str(), &after), 0) << path;
      EXPECT_EQ(after.st_mode, before.st_mode) << command[0] << " " << path;
      EXPECT_EQ(after.st_ino, before.st_ino) << command[0] << " " << path;
    }
  }
  // plrank-eval's stream outputs write to FIFOs and devices (pipes:
  // lightgbm_habits_test.cc) but refuse a directory, before any work.
  const CommandResult eval =
      RunCommand({BinPath("plrank-eval"), "--model=" + model,
                  "--data=" + prefix_ + ".test", "--scores_out=" + directory});
  EXPECT_EQ(eval.exit_code, 1);
  EXPECT_THAT(eval.err, HasSubstr(directory + ": exists and is a directory"));
  // No temporary is left beside any of them.
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos)
        << entry.path();
  }
}

// --eval_at: every cut-off is in the progress lines and in the model's
// history (train and valid), for tree and linear objectives.
TEST_F(CliTest, EveryEvalAtCutoffIsReportedAndStored) {
  for (const std::string objective : {"plrank", "ca"}) {
    const std::string model = dir_.File(objective + "_cutoffs.pb");
    const CommandResult train = RunCommand(
        {BinPath("plrank-train"), "--train=" + prefix_ + ".train",
         "--valid=" + prefix_ + ".vali", "--objective=" + objective,
         "--trees=4", "--leaves=4", "--min_data_in_leaf=5", "--log_period=2",
         "--ca_restarts=1", "--ca_max_rounds=2", "--eval_at=1,3,10",
         "--early_stopping_rounds=3", "--model_out=" + model});
    ASSERT_EQ(train.exit_code, 0) << train.err;
    EXPECT_THAT(train.out,
                ::testing::ContainsRegex(
                    "train ndcg@1 [0-9.]+ ndcg@3 [0-9.]+ ndcg@10 [0-9.]+ "
                    "valid ndcg@1 [0-9.]+ ndcg@3 [0-9.]+ ndcg@10 [0-9.]+"))
        << objective << "\n" << train.out;
    const CommandResult dump =
        RunCommand({BinPath("plrank-eval"), "--model=" + model, "--dump"});
    ASSERT_EQ(dump.exit_code, 0) << dump.err;
    EXPECT_THAT(dump.out,
                ::testing::ContainsRegex(
                    "train: ndcg@1=[0-9.]+ ndcg@10=[0-9.]+ ndcg@3=[0-9.]+  "
                    "valid: ndcg@1=[0-9.]+ ndcg@10=[0-9.]+ ndcg@3=[0-9.]+"))
        << objective << "\n" << dump.out;
  }
}

// A misspelt --objective fails before any data is read (the training file
// does not even exist here), listing every objective, linear ones included.
TEST_F(CliTest, UnknownObjectiveFailsBeforeLoadingAndListsAll) {
  CommandResult result = RunCommand(
      {BinPath("plrank-train"), "--train=" + dir_.File("absent.txt"),
       "--objective=plrnak", "--model_out=" + dir_.File("o.pb")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("unknown objective 'plrnak'"));
  EXPECT_THAT(result.err, HasSubstr("xendcg, ca, listmle"));
  EXPECT_THAT(result.err, Not(HasSubstr("absent.txt")));
  result = RunCommand({BinPath("plrank-train"), "--train=" + prefix_ + ".train",
                       "--objective=lambdarank",
                       "--model_out=" + dir_.File("o.pb")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("for 'lambdarank' use lambdamart"));
  EXPECT_THAT(result.out, Not(HasSubstr("train: ")));  // nothing was loaded
}

// An unknown flag names the nearest flag, or the PLRank name of a LightGBM
// parameter; valid spellings (--flag value, --noflag) still parse.
TEST_F(CliTest, UnknownFlagSuggestsTheNearestOrLightGbmEquivalent) {
  CommandResult result = Train({"--num_leaves=7"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err,
              HasSubstr("unknown flag --num_leaves: LightGBM's num_leaves is "
                        "--leaves here"));
  result = Train({"--num_iterations=7"});
  EXPECT_THAT(result.err, HasSubstr("is --trees here"));
  result = Train({"--learning_rat=0.2"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("unknown flag --learning_rat; did you "
                                    "mean --learning_rate?"));
  result = RunCommand({BinPath("plrank-eval"), "--modle=m.pb"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("did you mean --model?"));
  result = Train({"--model_out", dir_.File("spaced.pb"), "--seed", "3",
                  "--nopl_stop_at_lowest_label", "--min_data_in_leaf=5"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

// A LightGBM-form file without a group file: the message names the files
// that would be read, not a flag that does not exist; XGBoost's .group is
// read like LightGBM's .query.
TEST_F(CliTest, LightGbmFormNamesGroupFilesAndReadsDotGroup) {
  const std::string data = dir_.File("noqid.txt");
  WriteFile(data, "1 1:0.5 2:0.1\n0 1:0.2 2:0.3\n2 1:0.9 2:0.4\n0 1:0.1 2:0.8\n");
  CommandResult result = Train({"--train=" + data, "--model_out=" +
                                                       dir_.File("g.pb")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr(data + ".query"));
  EXPECT_THAT(result.err, HasSubstr(data + ".group"));
  EXPECT_THAT(result.err, Not(HasSubstr("--query_file")));
  WriteFile(data + ".group", "2\n2\n");
  result = Train({"--train=" + data, "--min_data_in_leaf=1",
                  "--model_out=" + dir_.File("g.pb")});
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

// --duplicate_features=last says how many repeated indices it overwrote.
TEST_F(CliTest, DuplicateFeaturesLastPrintsTheCount) {
  const std::string model = dir_.File("dup_model.pb");
  ASSERT_EQ(Train({"--model_out=" + model}).exit_code, 0);
  const std::string data = dir_.File("dup.txt");
  WriteFile(data, "1 qid:1 1:0.5 1:0.7 2:1 2:3\n0 qid:1 1:0.2 2:0.1\n");
  CommandResult eval =
      RunCommand({BinPath("plrank-eval"), "--model=" + model, "--data=" + data,
                  "--duplicate_features=last"});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_THAT(eval.err, HasSubstr(data + ": 2 repeated feature indices"));
  CommandResult train = RunCommand(
      {BinPath("plrank-train"), "--train=" + data, "--trees=1",
       "--min_data_in_leaf=1", "--duplicate_features=last",
       "--model_out=" + dir_.File("dup2.pb")});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_THAT(train.out, HasSubstr(data + ": 2 repeated feature indices"));
  // None repeated: no note.
  eval = RunCommand({BinPath("plrank-eval"), "--model=" + model,
                     "--data=" + prefix_ + ".test", "--duplicate_features=last"});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_THAT(eval.err, Not(HasSubstr("repeated")));
}

// ERR by hand: one query ranked labels 2, 1, 0 (the test model scores by
// x2). R = (2^r - 1) / 2^g; ERR = R1 + R2 (1 - R1) / 2.
//   g = 2 (the data's top label, default): 0.75 + 0.25 * 0.25 / 2 = 0.78125
//   g = 4 (--err_max_grade=4): 3/16 + (1/16)(13/16) / 2 = 0.212890625
//   g = 1: labels clamp to 1, 0.5 + 0.5 * 0.5 / 2 = 0.625
TEST_F(CliTest, ErrMaxGradeByHand) {
  const std::string model =
      testing::WriteTestModel(dir_.File("err_models"), "t", 1);
  ASSERT_FALSE(model.empty());
  const std::string data = dir_.File("err.txt");
  WriteFile(data, "2 qid:1 2:3\n1 qid:1 2:2\n0 qid:1 2:1\n");
  auto err_line = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {BinPath("plrank-eval"), "--model=" + model,
                                     "--data=" + data};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const CommandResult result = RunCommand(argv);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out;
  };
  EXPECT_THAT(err_line({}), HasSubstr("err          0.781250"));
  EXPECT_THAT(err_line({"--err_max_grade=4"}), HasSubstr("err          0.212891"));
  EXPECT_THAT(err_line({"--err_max_grade=1"}), HasSubstr("err          0.625000"));
  const CommandResult bad = RunCommand({BinPath("plrank-eval"), "--model=" + model,
                                        "--data=" + data, "--err_max_grade=32"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("--err_max_grade=32 is not in 0..31"));
}

}  // namespace
}  // namespace plrank
