#include "core/pipeline/auto_learning_rate.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/data/datagen.h"
#include "core/pipeline/train_job.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

TEST(AutoLearningRateTest, SmallDataKeepsTheUsualRate) {
  EXPECT_DOUBLE_EQ(AutoLearningRate(0, 100), 0.1);
  EXPECT_DOUBLE_EQ(AutoLearningRate(49'999, 100), 0.1);
  EXPECT_DOUBLE_EQ(AutoLearningRate(49'999, 10), 0.1);
}

TEST(AutoLearningRateTest, LargeDataSpendsABudgetOfTwentyOverTheTrees) {
  EXPECT_DOUBLE_EQ(AutoLearningRate(50'000, 100), 0.2);
  EXPECT_DOUBLE_EQ(AutoLearningRate(2'000'000, 10), 0.2);  // capped
  EXPECT_DOUBLE_EQ(AutoLearningRate(50'000, 160), 0.125);
  EXPECT_DOUBLE_EQ(AutoLearningRate(50'000, 200), 0.1);
  EXPECT_DOUBLE_EQ(AutoLearningRate(50'000, 1000), 0.1);  // floored
  EXPECT_DOUBLE_EQ(AutoLearningRate(50'000, 0), 0.1);
}

Dataset Generated(int32_t queries) {
  DatagenOptions options;
  options.num_queries = queries;
  options.num_features = 8;
  options.seed = 3;
  return GenerateDataset(options);
}

struct Trained {
  Ensemble model;
  std::vector<std::string> log;
};

Trained Train(const Dataset& data, bool auto_rate, double rate) {
  TrainJob job;
  job.booster.num_trees = 2;
  job.booster.num_leaves = 4;
  job.booster.num_threads = 1;
  job.booster.learning_rate = rate;
  job.auto_learning_rate = auto_rate;
  job.parameters["learning_rate"] = "0.1";  // as the flag's default records
  job.log_period = 0;
  Trained trained;
  absl::StatusOr<TrainSummary> summary = TrainOnData(
      job, data, nullptr, false,
      [&](const std::string& line) { trained.log.push_back(line); });
  EXPECT_TRUE(summary.ok()) << summary.status();
  if (summary.ok()) trained.model = std::move(summary->model);
  return trained;
}

std::vector<double> FirstTreeLeaves(const Trained& trained) {
  return trained.model.trees.empty() ? std::vector<double>{}
                                     : trained.model.trees[0].leaf_value;
}

// The resolved rate is the one trees are shrunk by, the one the artifact
// records and the one the log names; `other` is a rate it must differ from.
void ExpectResolvedRate(const Dataset& data, const std::string& rate,
                        double other) {
  SCOPED_TRACE(rate);
  const Trained automatic = Train(data, true, 0.1);
  EXPECT_EQ(automatic.model.parameters.at("learning_rate"), rate);
  EXPECT_THAT(automatic.log,
              Contains(HasSubstr("learning rate " + rate + " (auto from ")));
  EXPECT_EQ(FirstTreeLeaves(automatic),
            FirstTreeLeaves(Train(data, false, std::stod(rate))));
  EXPECT_NE(FirstTreeLeaves(automatic),
            FirstTreeLeaves(Train(data, false, other)));
}

TEST(AutoLearningRateTest, TrainOnDataResolvesItFromTheTrainingData) {
  const Dataset large = Generated(500);
  ASSERT_GE(large.num_documents(), 50'000u);
  ExpectResolvedRate(large, "0.2", 0.1);
  const Dataset small = Generated(100);
  ASSERT_LT(small.num_documents(), 50'000u);
  ExpectResolvedRate(small, "0.1", 0.2);
}

}  // namespace
}  // namespace plrank
