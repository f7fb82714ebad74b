// LightGBM users' habits with the real binaries (docs/lightgbm-habits.md):
// key=value arguments and config files for plrank-train, LightGBM's
// parameter names mapped or refused with the reason, --help exiting 0,
// scores and contributions to pipes, outputs checked before the work, the
// JSON dump and the LightGBM export (imported back bit for bit).
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/shared_data.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

class LightGbmHabitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = dir_.File("d");
    const CommandResult gen = RunCommand(
        {BinPath("plrank-datagen"), "--queries=40", "--mean_docs=15",
         "--features=8", "--seed=3", "--out_prefix=" + prefix_});
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
  }

  // Scores of `model` on the test file, as plrank-eval writes them.
  std::string Scores(const std::string& model) {
    const std::string out = dir_.File("scores.txt");
    const CommandResult eval =
        RunCommand({BinPath("plrank-eval"), "--model=" + model,
                    "--data=" + prefix_ + ".test", "--scores_out=" + out});
    EXPECT_EQ(eval.exit_code, 0) << eval.err;
    return ReadWholeFile(out);
  }

  std::string TrainWithFlags(const std::string& name) {
    const std::string model = dir_.File(name);
    const CommandResult train = RunCommand(
        {BinPath("plrank-train"), "--train=" + prefix_ + ".train",
         "--trees=6", "--leaves=7", "--min_data_in_leaf=5",
         "--learning_rate=0.2", "--quiet", "--model_out=" + model});
    EXPECT_EQ(train.exit_code, 0) << train.err;
    return model;
  }

  TempDir dir_;
  std::string prefix_;
};

TEST_F(LightGbmHabitsTest, KeyValueArgumentsTrainTheSameModelAsFlags) {
  const std::string with_flags = TrainWithFlags("flags.pb");
  const std::string with_keys = dir_.File("keys.pb");
  const CommandResult train = RunCommand(
      {BinPath("plrank-train"), "data=" + prefix_ + ".train",
       "num_iterations=6", "num_leaves=7", "min_data_in_leaf=5",
       "learning_rate=0.2", "verbosity=-1", "boosting=gbdt", "lambda_l1=0",
       "metric=ndcg", "label_gain=0,1,3,7,15", "task=train",
       "output_model=" + with_keys});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_THAT(train.out, Not(HasSubstr("[")));  // verbosity=-1: no progress
  EXPECT_EQ(Scores(with_keys), Scores(with_flags));
}

TEST_F(LightGbmHabitsTest, ConfigFileWithCommentsAndCommandLineOverrides) {
  const std::string with_flags = TrainWithFlags("flags.pb");
  const std::string config = dir_.File("train.conf");
  const std::string model = dir_.File("conf.pb");
  WriteFile(config,
            "# LightGBM-style config\n"
            "task = train\n"
            "objective = plrank   # PLRank's own name\n"
            "data = " + prefix_ + ".train\n"
            "num_trees = 6\n"
            "num_leaves = 31\n"
            "min_data_in_leaf = 5\n"
            "\n"
            "learning_rate = 0.2\n"
            "output_model = " + model + "\n");
  // num_leaves from the command line (key=value) and --quiet win.
  CommandResult train = RunCommand({BinPath("plrank-train"),
                                    "config=" + config, "num_leaves=7",
                                    "--quiet"});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_EQ(Scores(model), Scores(with_flags));
  // A --flag overrides the config file too.
  WriteFile(config, "num_leaves = 31\ndata = " + prefix_ +
                        ".train\nnum_trees=6\nmin_data_in_leaf=5\n"
                        "learning_rate=0.2\noutput_model=" + model + "\n");
  train = RunCommand(
      {BinPath("plrank-train"), "config=" + config, "--leaves=7", "--quiet"});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_EQ(Scores(model), Scores(with_flags));
  // The same flag on the command line twice with different values.
  train = RunCommand({BinPath("plrank-train"), "config=" + config,
                      "num_leaves=7", "--leaves=9"});
  EXPECT_EQ(train.exit_code, 2);
  EXPECT_THAT(train.err, HasSubstr("argument 'num_leaves=7' sets leaves=7 but "
                                   "--leaves=9 was given too"));
  // A malformed line names the file and line.
  WriteFile(config, "# ok\nnum_leaves 7\n");
  train = RunCommand({BinPath("plrank-train"), "config=" + config});
  EXPECT_EQ(train.exit_code, 2);
  EXPECT_THAT(train.err, HasSubstr(config + ":2: expected key = value"));
}

TEST_F(LightGbmHabitsTest, LightGbmValuesPlRankCannotDoAreRefusedWithTheReason) {
  const std::string data = "data=" + prefix_ + ".train";
  struct Case {
    std::string argument;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"boosting=dart", "LightGBM's boosting=dart is not supported: "
                             "plrank-train grows gradient-boosted trees only"},
           {"boosting_type=goss", "boosting_type=goss is not supported"},
           {"bagging_seed=3", "one seed drives every random choice here"},
           {"lambda_l1=0.5", "there is no L1 regularization of leaf values"},
           {"metric=map", "reports NDCG at the eval_at cut-offs only"},
           {"label_gain=0,1,2,3", "the gain of label l is fixed at 2^l - 1"},
           {"objective=regression", "plrank-train trains rankers only"},
           {"task=predict", "score with plrank-eval"},
           {"linear_tree=true", "no linear trees"},
           {"num_leavs=7", "unknown parameter 'num_leavs'; did you mean "
                           "'num_leaves'?"},
           {"verbosity=loud", "expected an integer level"},
           {"trees", "unexpected argument 'trees'"},
       }) {
    const CommandResult train =
        RunCommand({BinPath("plrank-train"), data, c.argument,
                    "--model_out=" + dir_.File("m.pb")});
    EXPECT_EQ(train.exit_code, 2) << c.argument;
    EXPECT_THAT(train.err, HasSubstr(c.message)) << c.argument;
  }
  // objective=lambdarank is LambdaMART here.
  const std::string model = dir_.File("lambdarank.pb");
  const CommandResult train = RunCommand(
      {BinPath("plrank-train"), data, "objective=lambdarank", "num_trees=2",
       "--quiet", "--model_out=" + model});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const CommandResult dump = RunCommand(
      {BinPath("plrank-eval"), "--model=" + model, "--dump"});
  EXPECT_THAT(dump.out, HasSubstr("objective: lambdamart"));
}

TEST_F(LightGbmHabitsTest, UnknownFlagsOfLightGbmNamesGetTheRightHint) {
  struct Case {
    std::string flag;
    std::string hint;
  };
  for (const Case& c : std::vector<Case>{
           {"--boosting=dart", "LightGBM's boosting: plrank-train grows "
                               "gradient-boosted trees only"},
           {"--bagging_seed=3", "LightGBM's bagging_seed: one --seed drives "
                                "every random choice"},
           {"--lambda_l1=1", "LightGBM's lambda_l1: there is no L1 "
                             "regularization of leaf values here; "
                             "--lambda_l2 is the L2"},
           {"--metric=ndcg", "LightGBM's metric: plrank-train always reports "
                             "NDCG at the --eval_at cut-offs"},
           {"--verbosity=-1", "LightGBM's verbosity: --quiet silences"},
           {"--label_gain=0,1,3", "LightGBM's label_gain: the gain of label l "
                                  "is fixed at 2^l - 1"},
           {"--num_leaves=7", "LightGBM's num_leaves is --leaves here"},
       }) {
    const CommandResult train = RunCommand({BinPath("plrank-train"), c.flag});
    EXPECT_EQ(train.exit_code, 2) << c.flag;
    EXPECT_THAT(train.err, HasSubstr(c.hint)) << c.flag;
  }
}

TEST_F(LightGbmHabitsTest, HelpExitsZeroAndDocumentsFlagFiles) {
  for (const char* program :
       {"plrank-train", "plrank-eval", "plrank-convert", "plrank-datagen"}) {
    const CommandResult help = RunCommand({BinPath(program), "--help"});
    EXPECT_EQ(help.exit_code, 0) << program << help.err;
    EXPECT_THAT(help.out, HasSubstr("--flagfile=F")) << program;
  }
  const CommandResult help = RunCommand({BinPath("plrank-train"), "--help"});
  EXPECT_THAT(help.out, HasSubstr("config=FILE"));
  // And --flagfile works as documented.
  const std::string flags = dir_.File("train.flags");
  const std::string model = dir_.File("flagfile.pb");
  WriteFile(flags, "# comment\n--trees=6\n--leaves=7\n--min_data_in_leaf=5\n"
                   "--learning_rate=0.2\n--quiet\n");
  const CommandResult train = RunCommand(
      {BinPath("plrank-train"), "--flagfile=" + flags,
       "--train=" + prefix_ + ".train", "--model_out=" + model});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_EQ(Scores(model), Scores(TrainWithFlags("flags.pb")));
}

TEST_F(LightGbmHabitsTest, ScoresAndContributionsGoToPipes) {
  const std::string model = TrainWithFlags("m.pb");
  const std::string expected = Scores(model);
  ASSERT_FALSE(expected.empty());
  for (const std::string target : {"-", "/dev/stdout"}) {
    const CommandResult eval =
        RunCommand({BinPath("plrank-eval"), "--model=" + model,
                    "--data=" + prefix_ + ".test", "--scores_out=" + target});
    ASSERT_EQ(eval.exit_code, 0) << eval.err;
    EXPECT_EQ(eval.out, expected) << target;  // only the scores
    EXPECT_THAT(eval.err, HasSubstr("ndcg@10")) << target;  // the report
  }
  // Through a real pipe and a named FIFO.
  const std::string piped = dir_.File("piped.txt");
  CommandResult shell = RunCommand(
      {"/bin/sh", "-c",
       "\"$0\" --model=\"$1\" --data=\"$2\" --scores_out=/dev/stdout | cat > "
       "\"$3\"",
       BinPath("plrank-eval"), model, prefix_ + ".test", piped});
  ASSERT_EQ(shell.exit_code, 0) << shell.err;
  EXPECT_EQ(ReadWholeFile(piped), expected);
  const std::string fifo = dir_.File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const std::string from_fifo = dir_.File("from_fifo.txt");
  shell = RunCommand(
      {"/bin/sh", "-c",
       "cat \"$4\" > \"$3\" & \"$0\" --model=\"$1\" --data=\"$2\" "
       "--scores_out=\"$4\" && wait",
       BinPath("plrank-eval"), model, prefix_ + ".test", from_fifo, fifo});
  ASSERT_EQ(shell.exit_code, 0) << shell.err;
  EXPECT_EQ(ReadWholeFile(from_fifo), expected);

  // Contributions: one line per document, features 1..8 then the bias,
  // adding up to the score.
  const CommandResult explain = RunCommand(
      {BinPath("plrank-eval"), "--model=" + model,
       "--data=" + prefix_ + ".test", "--contributions_out=-"});
  ASSERT_EQ(explain.exit_code, 0) << explain.err;
  std::vector<std::string> lines =
      absl::StrSplit(explain.out, '\n', absl::SkipEmpty());
  std::vector<std::string> scores =
      absl::StrSplit(expected, '\n', absl::SkipEmpty());
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines[0], HasSubstr("# contributions of features 1..8"));
  lines.erase(lines.begin());
  ASSERT_EQ(lines.size(), scores.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::vector<std::string> values = absl::StrSplit(lines[i], ' ');
    ASSERT_EQ(values.size(), 9u) << lines[i];
    double sum = 0;
    for (const std::string& value : values) {
      double v = 0;
      ASSERT_TRUE(absl::SimpleAtod(value, &v)) << value;
      sum += v;
    }
    double score = 0;
    ASSERT_TRUE(absl::SimpleAtod(scores[i], &score));
    EXPECT_NEAR(sum, score, 1e-9) << "line " << i;
  }
}

TEST_F(LightGbmHabitsTest, OutputsThatCannotBeWrittenFailBeforeTheWork) {
  const std::string model = TrainWithFlags("m.pb");
  for (const std::string flag : {"--scores_out", "--contributions_out"}) {
    const CommandResult eval = RunCommand(
        {BinPath("plrank-eval"), "--model=" + model,
         "--data=" + prefix_ + ".test", flag + "=" + dir_.File("no/such.txt")});
    EXPECT_EQ(eval.exit_code, 1) << flag;
    EXPECT_THAT(eval.err, HasSubstr("its directory " + dir_.File("no") +
                                    " does not exist"));
    EXPECT_THAT(eval.out, Not(HasSubstr("queries")));  // nothing evaluated
  }
  const CommandResult convert = RunCommand(
      {BinPath("plrank-convert"), "--model=" + model,
       "--to_lightgbm=" + dir_.path()});
  EXPECT_EQ(convert.exit_code, 1);
  EXPECT_THAT(convert.err, HasSubstr("is a directory"));
}

TEST_F(LightGbmHabitsTest, JsonDumpNumbersFeaturesFromOne) {
  const std::string model = TrainWithFlags("m.pb");
  const CommandResult dump = RunCommand(
      {BinPath("plrank-eval"), "--model=" + model, "--dump_format=json"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  const nlohmann::json json = nlohmann::json::parse(dump.out);
  EXPECT_EQ(json["schema"], "plrank.model");
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json["num_features"], 8);
  ASSERT_EQ(json["trees"].size(), 6u);
  const nlohmann::json& root = json["trees"][0]["tree_structure"];
  ASSERT_TRUE(root.contains("feature"));
  EXPECT_GE(root["feature"].get<int>(), 1);
  EXPECT_LE(root["feature"].get<int>(), 8);
  // The text dump names the same feature the same way.
  const CommandResult text =
      RunCommand({BinPath("plrank-eval"), "--model=" + model, "--dump"});
  EXPECT_THAT(text.out, HasSubstr("if feature " +
                                  std::to_string(root["feature"].get<int>()) +
                                  " <="));
  EXPECT_THAT(text.out, HasSubstr("numbered from 1, as in LETOR files"));
  const CommandResult bad = RunCommand(
      {BinPath("plrank-eval"), "--model=" + model, "--dump_format=xml"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("'xml' is not one of text, json"));
}

// The exported LightGBM text model imported back scores bit for bit as the
// original: a PLRank-trained model (with missing values in the data) and a
// real LightGBM model with zero-as-missing splits.
TEST_F(LightGbmHabitsTest, LightGbmExportImportsBackBitIdentical) {
  const std::string model = TrainWithFlags("m.pb");
  const std::string text = dir_.File("m.txt");
  const std::string back = dir_.File("back.pb");
  CommandResult convert = RunCommand(
      {BinPath("plrank-convert"), "--model=" + model, "--to_lightgbm=" + text});
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
  EXPECT_THAT(ReadWholeFile(text), HasSubstr("version=v4\nnum_class=1\n"));
  convert = RunCommand({BinPath("plrank-convert"), "--lightgbm_model=" + text,
                        "--model_out=" + back});
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
  EXPECT_EQ(Scores(back), Scores(model));

  PLRANK_REQUIRE_SHARED_DATA("lightgbm-models/lambdarank_zero_missing_30x15.txt");
  const std::string source = ::plrank::testing::SharedDataPath(
      "lightgbm-models/lambdarank_zero_missing_30x15.txt");
  const std::string imported = dir_.File("imported.pb");
  convert = RunCommand({BinPath("plrank-convert"), "--lightgbm_model=" + source,
                        "--model_out=" + imported,
                        "--to_lightgbm=" + text});
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
  convert = RunCommand({BinPath("plrank-convert"), "--lightgbm_model=" + text,
                        "--model_out=" + back});
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
  const std::string data = ::plrank::testing::SharedDataPath(
      "lightgbm-models/rank_nan.test");
  auto scores_on = [&](const std::string& m) {
    const std::string out = dir_.File("s.txt");
    const CommandResult eval = RunCommand(
        {BinPath("plrank-eval"), "--model=" + m, "--data=" + data,
         "--scores_out=" + out});
    EXPECT_EQ(eval.exit_code, 0) << eval.err;
    return ReadWholeFile(out);
  };
  EXPECT_EQ(scores_on(back), scores_on(imported));
}

TEST_F(LightGbmHabitsTest, ModelsLightGbmCannotExpressAreRefused) {
  const std::string model = dir_.File("ca.pb");
  const CommandResult train = RunCommand(
      {BinPath("plrank-train"), "--train=" + prefix_ + ".train",
       "--objective=ca", "--ca_restarts=1", "--ca_max_rounds=1", "--quiet",
       "--model_out=" + model});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const CommandResult convert = RunCommand(
      {BinPath("plrank-convert"), "--model=" + model,
       "--to_lightgbm=" + dir_.File("ca.txt")});
  EXPECT_EQ(convert.exit_code, 1);
  EXPECT_THAT(convert.err, HasSubstr("--to_lightgbm: the model has a linear "
                                     "part"));
}

}  // namespace
}  // namespace plrank
