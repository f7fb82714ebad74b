// Learning curves from the real programs: plrank-train --history_out writes
// every iteration's losses and NDCG at every cut-off, early stopping reports
// its best iteration, and plrank-eval --importance lists every feature.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

const std::vector<std::string> kCutoffs = {"ndcg@1", "ndcg@3", "ndcg@10"};

int Count(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

class HistoryCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = dir_.File("data");
    const CommandResult gen = RunCommand(
        {BinPath("plrank-datagen"), "--queries=60", "--mean_docs=20",
         "--features=12", "--seed=5", "--out_prefix=" + prefix_});
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
  }

  CommandResult Train(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {
        BinPath("plrank-train"), "--train=" + prefix_ + ".train",
        "--valid=" + prefix_ + ".vali", "--leaves=5", "--min_data_in_leaf=5",
        "--eval_at=1,3,10", "--model_out=" + dir_.File("m.pb")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  }

  nlohmann::json History() {
    return nlohmann::json::parse(ReadWholeFile(dir_.File("history.json")),
                                 nullptr, false);
  }

  TempDir dir_;
  std::string prefix_;
};

void ExpectUnitInterval(const nlohmann::json& values, const std::string& what) {
  for (const std::string& cutoff : kCutoffs) {
    ASSERT_TRUE(values.contains(cutoff)) << what << " " << values.dump();
    ASSERT_TRUE(values[cutoff].is_number()) << what << " " << values.dump();
    const double value = values[cutoff].get<double>();
    EXPECT_GE(value, 0.0) << what;
    EXPECT_LE(value, 1.0) << what;
  }
}

// Every iteration, not only every --log_period: 12 trees, 12 records, each
// with finite losses and all three cut-offs on both sets.
TEST_F(HistoryCliTest, HistoryHasEveryIterationAndEveryCutoff) {
  const std::string history = dir_.File("history.json");
  const CommandResult train =
      Train({"--trees=12", "--log_period=5", "--history_out=" + history});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_THAT(train.out, HasSubstr("wrote " + history + " (12 iterations)"));
  EXPECT_THAT(train.out, HasSubstr("(12 trees, 0 linear weights)"));
  // Progress lines stay at --log_period: iterations 5, 10 and the last.
  EXPECT_EQ(Count(train.out, "] elapsed "), 3) << train.out;

  const nlohmann::json json = History();
  ASSERT_FALSE(json.is_discarded()) << ReadWholeFile(history);
  EXPECT_EQ(json["format"], "plrank-history-1");
  EXPECT_EQ(json["objective"], "plrank");
  EXPECT_EQ(json["eval_at"], nlohmann::json({1, 3, 10}));
  EXPECT_EQ(json["metrics"], nlohmann::json(kCutoffs));
  EXPECT_EQ(json["trees"], 12);
  EXPECT_EQ(json["iterations"], 12);
  EXPECT_EQ(json["best_iteration"], 12);
  EXPECT_EQ(json["best_metric"], "ndcg@1");
  EXPECT_GT(json["train_queries"].get<int>(), 0);
  EXPECT_GT(json["valid_queries"].get<int>(), 0);
  const nlohmann::json& records = json["history"];
  ASSERT_EQ(records.size(), 12u);
  for (size_t i = 0; i < records.size(); ++i) {
    const nlohmann::json& record = records[i];
    EXPECT_EQ(record["iteration"], static_cast<int>(i) + 1);
    for (const char* loss : {"train_loss", "valid_loss"}) {
      ASSERT_TRUE(record[loss].is_number()) << record.dump();
      EXPECT_TRUE(std::isfinite(record[loss].get<double>())) << record.dump();
    }
    ExpectUnitInterval(record["train"], "train " + std::to_string(i + 1));
    ExpectUnitInterval(record["valid"], "valid " + std::to_string(i + 1));
  }
  // The loss goes down on the data it is fitted to.
  EXPECT_LT(records[11]["train_loss"].get<double>(),
            records[0]["train_loss"].get<double>());
  EXPECT_EQ(json["best_score"], records[11]["valid"]["ndcg@1"]);
}

// Early stopping prints its best iteration and score; the history has every
// iteration run and records the same best iteration and score.
TEST_F(HistoryCliTest, EarlyStoppingRecordsTheBestIteration) {
  const CommandResult train =
      Train({"--trees=200", "--learning_rate=0.5", "--early_stopping_rounds=3",
             "--history_out=" + dir_.File("history.json")});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const nlohmann::json json = History();
  ASSERT_FALSE(json.is_discarded());
  const int best = json["best_iteration"].get<int>();
  const int ran = json["iterations"].get<int>();
  ASSERT_EQ(json["history"].size(), static_cast<size_t>(ran));
  EXPECT_EQ(ran, best + 3);
  double best_seen = -1;
  int first_best = 0;
  for (const nlohmann::json& record : json["history"]) {
    const double value = record["valid"]["ndcg@1"].get<double>();
    if (value > best_seen) {
      best_seen = value;
      first_best = record["iteration"].get<int>();
    }
  }
  EXPECT_EQ(first_best, best);
  EXPECT_EQ(json["best_score"].get<double>(), best_seen);
  char score[32];
  std::snprintf(score, sizeof(score), "%.4f", best_seen);
  EXPECT_THAT(train.out,
              HasSubstr("early stopping: best iteration " +
                        std::to_string(best) + " (valid ndcg@1 " + score +
                        "); kept " + std::to_string(best) + " of " +
                        std::to_string(ran) + " iterations"))
      << train.out;
}

// A linear ranker has one record (its final weights) and no loss.
TEST_F(HistoryCliTest, LinearRankerWritesItsFinalMetrics) {
  const CommandResult train = Train(
      {"--objective=listmle", "--history_out=" + dir_.File("history.json")});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const nlohmann::json json = History();
  ASSERT_FALSE(json.is_discarded());
  EXPECT_EQ(json["trees"], 0);
  ASSERT_EQ(json["history"].size(), 1u);
  EXPECT_TRUE(json["history"][0]["train_loss"].is_null());
  ExpectUnitInterval(json["history"][0]["train"], "train");
  ExpectUnitInterval(json["history"][0]["valid"], "valid");
}

TEST_F(HistoryCliTest, UnwritableHistoryFailsBeforeTraining) {
  const CommandResult train =
      Train({"--trees=2", "--history_out=" + dir_.path()});
  EXPECT_EQ(train.exit_code, 1);
  EXPECT_THAT(train.err, HasSubstr(dir_.path()));
  EXPECT_THAT(train.out, Not(HasSubstr("train: ")));  // nothing was loaded
}

// One line per feature: index, gain, splits, name; the splits add up to the
// count in the summary line.
TEST_F(HistoryCliTest, EvalImportanceListsEveryFeature) {
  ASSERT_EQ(Train({"--trees=6", "--quiet"}).exit_code, 0);
  const CommandResult result = RunCommand(
      {BinPath("plrank-eval"), "--model=" + dir_.File("m.pb"), "--importance"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::vector<std::string> lines =
      absl::StrSplit(result.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u + 12u) << result.out;
  EXPECT_THAT(lines[0], MatchesRegex("# feature importance: [0-9]+ of 12 "
                                     "features split on, [0-9]+ splits in 6 "
                                     "trees"));
  EXPECT_EQ(lines[1], "feature\tgain\tsplits\tname");
  int64_t splits = 0;
  double previous_gain = 1e300;
  for (size_t i = 2; i < lines.size(); ++i) {
    std::vector<std::string> fields = absl::StrSplit(lines[i], '\t');
    ASSERT_EQ(fields.size(), 4u) << lines[i];
    double gain = 0;
    int64_t count = 0;
    ASSERT_TRUE(absl::SimpleAtod(fields[1], &gain)) << lines[i];
    ASSERT_TRUE(absl::SimpleAtoi(fields[2], &count)) << lines[i];
    EXPECT_LE(gain, previous_gain) << "sorted by gain";
    previous_gain = gain;
    splits += count;
  }
  EXPECT_GT(splits, 0);
  EXPECT_THAT(lines[0], HasSubstr(" " + std::to_string(splits) + " splits"));
}

}  // namespace
}  // namespace plrank
