#include "core/linear/coordinate_ascent.h"

#include <omp.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/data/letor_reader.h"
#include "core/data/random.h"
#include "core/linear/feature_scaling.h"
#include "core/linear/linear_model.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"
#include "tests/testing/toy_data.h"

namespace plrank {
namespace {

using ::plrank::testing::MakeToyDataset;
using ::plrank::testing::ToySpec;

TEST(CoordinateAscentTest, FindsThePerfectFeature) {
  const Dataset data = MakeToyDataset(ToySpec());
  CoordinateAscentOptions options;
  options.restarts = 2;
  auto result = TrainCoordinateAscent(data, nullptr, options, nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_DOUBLE_EQ(result->train_ndcg, 1.0);
  ASSERT_EQ(result->weights.size(), 3u);
  // In standardized units the perfect feature (1) carries the largest weight.
  const FeatureScaling scaling = ComputeFeatureScaling(data);
  const double w1 = result->weights[1] * scaling.stddev[1];
  EXPECT_GT(w1, 0.0);
  EXPECT_GT(w1, std::fabs(result->weights[0] * scaling.stddev[0]));
  EXPECT_GT(w1, std::fabs(result->weights[2] * scaling.stddev[2]));
  EXPECT_TRUE(std::isnan(result->valid_ndcg));
}

TEST(CoordinateAscentTest, NeverLowersTrainingNdcgBetweenRounds) {
  ToySpec spec;
  spec.signal = {0.2, 0.5, -0.4, 0.0, 0.1};
  spec.noise = {1.0, 1.0, 1.0, 1.0, 1.0};
  spec.offset = {0.0, 3.0, -2.0, 10.0, 0.0};
  spec.scale = {1.0, 0.1, 20.0, 1.0, 1.0};
  spec.nan_rate = 0.05;
  spec.queries = 60;
  const Dataset data = MakeToyDataset(spec);
  CoordinateAscentOptions options;
  options.restarts = 3;
  options.tolerance = 0.0;
  options.max_rounds = 10;
  std::vector<std::string> lines;
  auto result = TrainCoordinateAscent(
      data, &data, options, [&](const std::string& l) { lines.push_back(l); });
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_GE(result->history.size(), 2u);
  for (size_t i = 1; i < result->history.size(); ++i) {
    EXPECT_GE(result->history[i], result->history[i - 1]) << "round " << i;
  }
  EXPECT_GT(result->history.back(), result->history.front());
  EXPECT_EQ(result->iterations + 1, static_cast<int>(result->history.size()));
  // The reported NDCG is that of the raw-feature weights on raw features.
  EXPECT_NEAR(result->train_ndcg, result->history.back(), 1e-9);
  EXPECT_DOUBLE_EQ(result->valid_ndcg, result->train_ndcg);
  EXPECT_FALSE(lines.empty());
  // L1-normalized in standardized units.
  const FeatureScaling scaling = ComputeFeatureScaling(data);
  double norm = 0.0;
  for (int f = 0; f < data.num_features; ++f) {
    norm += std::fabs(result->weights[f] * scaling.stddev[f]);
  }
  EXPECT_NEAR(norm, 1.0, 1e-12);
}

TEST(CoordinateAscentTest, SameResultWithOneAndTwoThreads) {
  ToySpec spec;
  spec.signal = {0.2, 0.5, -0.4};
  spec.noise = {1.0, 1.0, 1.0};
  spec.queries = 1200;  // enough documents for the parallel path
  spec.min_docs = 12;
  spec.max_docs = 20;
  const Dataset data = MakeToyDataset(spec);
  ASSERT_GE(static_cast<int64_t>(data.num_documents()),
            kLinearParallelMinDocuments);
  CoordinateAscentOptions options;
  options.seed = 3;
  options.restarts = 2;
  options.max_rounds = 1;
  omp_set_num_threads(1);
  auto one = TrainCoordinateAscent(data, nullptr, options, nullptr);
  omp_set_num_threads(2);
  auto two = TrainCoordinateAscent(data, nullptr, options, nullptr);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(one->weights, two->weights);
  EXPECT_EQ(one->history, two->history);
}

TEST(CoordinateAscentTest, SeedDrivesTheRestarts) {
  ToySpec spec;
  spec.signal = {0.2, 0.5, -0.4};
  spec.noise = {1.0, 1.0, 1.0};
  const Dataset data = MakeToyDataset(spec);
  CoordinateAscentOptions options;
  options.seed = 3;
  auto first = TrainCoordinateAscent(data, nullptr, options, nullptr);
  auto again = TrainCoordinateAscent(data, nullptr, options, nullptr);
  options.seed = 4;
  auto other = TrainCoordinateAscent(data, nullptr, options, nullptr);
  ASSERT_TRUE(first.ok() && again.ok() && other.ok());
  EXPECT_EQ(first->weights, again->weights);
  EXPECT_NE(first->weights, other->weights);
}

TEST(CoordinateAscentTest, RejectsBadOptions) {
  const Dataset data = MakeToyDataset(ToySpec());
  CoordinateAscentOptions options;
  options.restarts = 0;
  EXPECT_FALSE(TrainCoordinateAscent(data, nullptr, options, nullptr).ok());
  options = CoordinateAscentOptions();
  options.tolerance = -1.0;
  EXPECT_FALSE(TrainCoordinateAscent(data, nullptr, options, nullptr).ok());
  EXPECT_FALSE(TrainCoordinateAscent(Dataset(), nullptr,
                                     CoordinateAscentOptions(), nullptr)
                   .ok());
}

TEST(CoordinateAscentTest, BeatsRandomRankingOnMq2008) {
  PLRANK_REQUIRE_SHARED_DATA("MQ2008/S1.txt");
  auto train = ReadLetorFile(::plrank::testing::SharedDataPath("MQ2008/S1.txt"),
                             ReadOptions());
  ASSERT_TRUE(train.ok()) << train.status();
  ReadOptions test_options;
  test_options.num_features = train->num_features;
  auto test = ReadLetorFile(::plrank::testing::SharedDataPath("MQ2008/S2.txt"),
                            test_options);
  ASSERT_TRUE(test.ok()) << test.status();
  CoordinateAscentOptions options;
  options.restarts = 2;
  options.max_rounds = 5;
  auto result = TrainCoordinateAscent(*train, &*test, options, nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  double random_ndcg = 0.0;
  constexpr int kDraws = 5;
  for (int draw = 0; draw < kDraws; ++draw) {
    Xoshiro256 random(11, draw);
    std::vector<double> scores(test->num_documents());
    for (double& s : scores) s = random.Uniform();
    random_ndcg += MeanNdcg(*test, scores, 10) / kDraws;
  }
  RecordProperty("ca_test_ndcg10", std::to_string(result->valid_ndcg));
  RecordProperty("random_test_ndcg10", std::to_string(random_ndcg));
  EXPECT_GT(result->valid_ndcg, random_ndcg + 0.03);
  EXPECT_GT(result->train_ndcg, result->history.front() - 1e-9);
}

}  // namespace
}  // namespace plrank
