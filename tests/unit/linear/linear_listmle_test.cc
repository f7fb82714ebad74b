#include "core/linear/linear_listmle.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/data/letor_reader.h"
#include "core/data/random.h"
#include "core/linear/feature_scaling.h"
#include "core/linear/linear_model.h"
#include "core/linear/listmle_objective.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"
#include "tests/testing/toy_data.h"

namespace plrank {
namespace {

using ::plrank::testing::MakeToyDataset;
using ::plrank::testing::ToySpec;

ToySpec NoisySpec() {
  ToySpec spec;
  spec.signal = {0.2, 0.5, -0.4, 0.0};
  spec.noise = {1.0, 1.0, 1.0, 0.0};  // feature 3 is constant
  spec.offset = {0.0, 3.0, -2.0, 4.0};
  spec.scale = {1.0, 0.1, 20.0, 1.0};
  spec.nan_rate = 0.05;
  spec.queries = 30;
  return spec;
}

TEST(ListMleObjectiveTest, GradientMatchesFiniteDifferences) {
  Dataset data = MakeToyDataset(NoisySpec());
  std::fill(data.features.begin() + 3 * data.num_documents(),
            data.features.end(), 4.0f);  // feature 3 constant
  const FeatureScaling scaling = ComputeFeatureScaling(data);
  EXPECT_EQ(scaling.num_active, 3);
  for (int32_t topk : {3, 0}) {
    ListMleObjective objective(data, scaling, topk, 0.7, 5);
    const std::vector<double> v = {0.8, -1.3, 0.4, 0.25};
    std::vector<double> gradient(4), ignored(4);
    objective.Evaluate(v, absl::MakeSpan(gradient));
    for (int f = 0; f < 4; ++f) {
      const double h = 1e-5;
      std::vector<double> plus = v, minus = v;
      plus[f] += h;
      minus[f] -= h;
      const double numeric =
          (objective.Evaluate(plus, absl::MakeSpan(ignored)) -
           objective.Evaluate(minus, absl::MakeSpan(ignored))) /
          (2 * h);
      EXPECT_NEAR(gradient[f], numeric,
                  1e-6 * std::max(1.0, std::fabs(numeric)))
          << "topk " << topk << " feature " << f;
    }
    // The constant feature only feels the prior.
    EXPECT_DOUBLE_EQ(gradient[3], 0.7 * 0.25);
  }
}

TEST(ListMleObjectiveTest, ValueMatchesTheDefinition) {
  // One query with distinct labels: the permutation is fixed.
  Dataset data;
  data.num_features = 1;
  data.labels = {1, 3, 0, 2};
  data.features = {0.5f, -1.0f, 2.0f, 0.25f};
  data.query_offsets = {0, 4};
  data.query_ids = {"q"};
  const FeatureScaling scaling = ComputeFeatureScaling(data);
  const double w = 1.7;
  ListMleObjective objective(data, scaling, 2, 0.5, 1);
  std::vector<double> gradient(1);
  const double value = objective.Evaluate({w}, absl::MakeSpan(gradient));
  std::vector<double> s(4);
  for (int i = 0; i < 4; ++i) s[i] = w / scaling.stddev[0] * data.features[i];
  const std::vector<int> order = {1, 3, 0, 2};  // labels 3, 2, 1, 0
  double log_likelihood = 0.0;
  for (int j = 0; j < 2; ++j) {
    double context = 0.0;
    for (int t = j; t < 4; ++t) context += std::exp(s[order[t]]);
    log_likelihood += s[order[j]] - std::log(context);
  }
  EXPECT_NEAR(value, -log_likelihood + 0.25 * w * w, 1e-12);
}

TEST(LinearListMleTest, RanksASeparableSetPerfectly) {
  const Dataset data = MakeToyDataset(ToySpec());  // feature 1 = label
  LinearListMleOptions options;
  auto result = TrainLinearListMle(data, &data, options, nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_DOUBLE_EQ(result->train_ndcg, 1.0);
  EXPECT_DOUBLE_EQ(result->valid_ndcg, 1.0);
  EXPECT_GT(result->weights[1], 0.0);
  EXPECT_GT(result->iterations, 0);
  ASSERT_FALSE(result->history.empty());
  for (size_t i = 1; i < result->history.size(); ++i) {
    EXPECT_GE(result->history[i], result->history[i - 1]) << "iteration " << i;
  }
}

TEST(LinearListMleTest, SameResultWithOneAndTwoThreads) {
  ToySpec spec = NoisySpec();
  spec.queries = 1500;  // enough documents for the parallel path
  const Dataset data = MakeToyDataset(spec);
  ASSERT_GE(static_cast<int64_t>(data.num_documents()),
            kLinearParallelMinDocuments);
  LinearListMleOptions options;
  options.max_iterations = 30;
  omp_set_num_threads(1);
  auto one = TrainLinearListMle(data, nullptr, options, nullptr);
  omp_set_num_threads(2);
  auto two = TrainLinearListMle(data, nullptr, options, nullptr);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(one->weights, two->weights);
  EXPECT_EQ(one->history, two->history);
  EXPECT_TRUE(std::isnan(one->valid_ndcg));
}

TEST(LinearListMleTest, RejectsBadOptions) {
  const Dataset data = MakeToyDataset(ToySpec());
  LinearListMleOptions options;
  options.l2 = -1.0;
  EXPECT_FALSE(TrainLinearListMle(data, nullptr, options, nullptr).ok());
  options = LinearListMleOptions();
  options.max_iterations = 0;
  EXPECT_FALSE(TrainLinearListMle(data, nullptr, options, nullptr).ok());
}

TEST(LinearListMleTest, BeatsRandomRankingOnMq2008) {
  PLRANK_REQUIRE_SHARED_DATA("MQ2008/S1.txt");
  auto train = ReadLetorFile(::plrank::testing::SharedDataPath("MQ2008/S1.txt"),
                             ReadOptions());
  ASSERT_TRUE(train.ok()) << train.status();
  ReadOptions test_options;
  test_options.num_features = train->num_features;
  auto test = ReadLetorFile(::plrank::testing::SharedDataPath("MQ2008/S2.txt"),
                            test_options);
  ASSERT_TRUE(test.ok()) << test.status();
  std::vector<std::string> lines;
  auto result = TrainLinearListMle(
      *train, &*test, LinearListMleOptions(),
      [&](const std::string& line) { lines.push_back(line); });
  ASSERT_TRUE(result.ok()) << result.status();
  double random_ndcg = 0.0;
  constexpr int kDraws = 5;
  for (int draw = 0; draw < kDraws; ++draw) {
    Xoshiro256 random(11, draw);
    std::vector<double> scores(test->num_documents());
    for (double& s : scores) s = random.Uniform();
    random_ndcg += MeanNdcg(*test, scores, 10) / kDraws;
  }
  RecordProperty("listmle_test_ndcg10", std::to_string(result->valid_ndcg));
  RecordProperty("random_test_ndcg10", std::to_string(random_ndcg));
  EXPECT_GT(result->valid_ndcg, random_ndcg + 0.03);
  EXPECT_FALSE(lines.empty());
}

}  // namespace
}  // namespace plrank
