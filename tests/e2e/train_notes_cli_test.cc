// What plrank-train tells the user about the data and the fit, end to end:
// feature names from a file reach dumps and importance tables, a set with
// no ranking signal is warned about even with --quiet, dumps say how their
// features are numbered, and L-BFGS stops are reported in words.

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
using ::plrank::testing::RunCommand;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

class TrainNotesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = dir_.File("data");
    const CommandResult gen =
        RunCommand({BinPath("plrank-datagen"), "--queries=60", "--mean_docs=20",
                    "--features=6", "--seed=5", "--out_prefix=" + prefix_});
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
  }

  CommandResult Train(const std::string& data,
                      const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {BinPath("plrank-train"), "--train=" + data,
                                     "--trees=10", "--leaves=7",
                                     "--min_data_in_leaf=5"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  }

  TempDir dir_;
  std::string prefix_;
};

TEST_F(TrainNotesTest, FeatureNamesFromAFileReachDumpAndImportance) {
  const std::string names = dir_.File("names.txt");
  // Line i names LETOR feature i; line 3 is blank (feature 3 unnamed).
  WriteFile(names, "bm25\n  pagerank \n\nclicks\n");
  const std::string model = dir_.File("named.pb");
  CommandResult train = Train(
      prefix_ + ".train",
      {"--quiet", "--feature_names_file=" + names, "--model_out=" + model});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  CommandResult dump =
      RunCommand({BinPath("plrank-eval"), "--model=" + model, "--dump"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_THAT(dump.out, HasSubstr("numbered from 1, as in LETOR files"));
  // At least one split on a named feature appears with its name; an
  // unnamed one appears bare.
  EXPECT_THAT(dump.out,
              ::testing::AnyOf(HasSubstr("feature 1[bm25]"),
                               HasSubstr("feature 2[pagerank]"),
                               HasSubstr("feature 4[clicks]")));
  EXPECT_THAT(dump.out, Not(HasSubstr("feature 3[")));
  CommandResult importance =
      RunCommand({BinPath("plrank-eval"), "--model=" + model, "--importance"});
  ASSERT_EQ(importance.exit_code, 0) << importance.err;
  EXPECT_THAT(importance.out,
              ::testing::AnyOf(HasSubstr("bm25"), HasSubstr("pagerank"),
                               HasSubstr("clicks")));

  // More names than features: refused before training, naming file and line.
  WriteFile(names, "a\nb\nc\nd\ne\nf\ng\n");
  train = Train(prefix_ + ".train", {"--quiet", "--feature_names_file=" + names,
                                     "--model_out=" + dir_.File("x.pb")});
  EXPECT_NE(train.exit_code, 0);
  EXPECT_THAT(train.err, HasSubstr(names + ":7: names feature 7"));
}

TEST_F(TrainNotesTest, NoRankingSignalIsWarnedEvenWhenQuiet) {
  const std::string flat = dir_.File("flat.txt");
  WriteFile(flat,
            "1 qid:1 1:0.1 2:3\n1 qid:1 1:0.4 2:1\n"
            "0 qid:2 1:0.3 2:2\n0 qid:2 1:0.9 2:0\n");
  CommandResult train = Train(flat, {"--quiet", "--min_data_in_leaf=1",
                                     "--model_out=" + dir_.File("flat.pb")});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_THAT(train.err, HasSubstr("no query has two different labels"));
  EXPECT_THAT(train.out, Not(HasSubstr("warning")));

  // Half the queries without signal: a note on the progress output.
  const std::string half = dir_.File("half.txt");
  WriteFile(half,
            "1 qid:1 1:0.1 2:3\n0 qid:1 1:0.4 2:1\n"
            "0 qid:2 1:0.3 2:2\n0 qid:2 1:0.9 2:0\n"
            "2 qid:3 1:0.3 2:2\n2 qid:3 1:0.9 2:0\n");
  train = Train(
      half, {"--min_data_in_leaf=1", "--model_out=" + dir_.File("half.pb")});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_THAT(train.out, HasSubstr("only 1 of 3 queries have two different"));
  EXPECT_THAT(train.err, Not(HasSubstr("warning")));

  // Real data: neither.
  train = Train(prefix_ + ".train", {"--model_out=" + dir_.File("ok.pb")});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_THAT(train.out + train.err, Not(HasSubstr("ranking signal")));
}

TEST_F(TrainNotesTest, ListMleReportsTheLbfgsStopInWords) {
  CommandResult train =
      Train(prefix_ + ".train", {"--objective=listmle", "--trees=1",
                                 "--model_out=" + dir_.File("listmle.pb")});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_THAT(train.out, HasSubstr("L-BFGS stopped after"));
  EXPECT_THAT(train.out, ::testing::ContainsRegex(
                             "L-BFGS stopped after [0-9]+ iterations: [a-z]"));
}

}  // namespace
}  // namespace plrank

namespace plrank {
namespace {

// --dataset_cache: the first run parses and writes the cache, the second
// reads it, and both train the same model.
TEST_F(TrainNotesTest, DatasetCacheIsWrittenThenReadAndChangesNothing) {
  const std::string cache_dir = dir_.File("cache");
  ASSERT_TRUE(std::filesystem::create_directory(cache_dir));
  std::vector<std::string> dumps;
  for (const char* expected : {"dataset cache: wrote", "dataset cache: read"}) {
    const std::string model = dir_.File("cached.pb");
    CommandResult train =
        Train(prefix_ + ".train", {"--dataset_cache", "--model_out=" + model,
                                   "--dataset_cache_dir=" + cache_dir,
                                   "--valid=" + prefix_ + ".vali"});
    ASSERT_EQ(train.exit_code, 0) << train.err;
    EXPECT_THAT(train.out + train.err, HasSubstr(expected));
    CommandResult dump =
        RunCommand({BinPath("plrank-eval"), "--model=" + model, "--dump"});
    ASSERT_EQ(dump.exit_code, 0) << dump.err;
    dumps.push_back(dump.out.substr(dump.out.find("history:")));
  }
  EXPECT_EQ(dumps[0], dumps[1]);
  CommandResult plain =
      Train(prefix_ + ".train", {"--model_out=" + dir_.File("plain.pb"),
                                 "--valid=" + prefix_ + ".vali"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_THAT(plain.out + plain.err, Not(HasSubstr("dataset cache")));
}

}  // namespace
}  // namespace plrank
