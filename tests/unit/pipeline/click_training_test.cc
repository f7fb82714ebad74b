// Position debiasing: the jointly learned position bias (gam), the IPS
// weights and the regression-EM propensity estimate.
#include "core/pipeline/click_training.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/boosting/booster.h"
#include "core/data/random.h"
#include "core/objectives/lambdamart.h"
#include "core/objectives/plackett_luce/plackett_luce.h"
#include "core/pipeline/propensity_estimation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;

double Uniform(SplitMix64& rng) {
  return static_cast<double>(rng.Next() >> 11) * 0x1.0p-53;
}

// A click log under the position-based model: `queries` sessions of `shown`
// documents, feature 0 = the document's relevance probability plus noise
// (feature 1 pure noise), examination (1/k)^eta, clicks = examined and
// relevant. Positions are a random permutation per session, so position
// and relevance are independent.
Dataset ClickLog(uint64_t seed, int queries, int shown, double eta) {
  SplitMix64 rng(seed);
  Dataset data;
  data.num_features = 2;
  std::vector<float> f0, f1;
  data.query_offsets.push_back(0);
  for (int q = 0; q < queries; ++q) {
    std::vector<int32_t> order(shown);
    for (int i = 0; i < shown; ++i) order[i] = i + 1;
    for (int i = shown - 1; i > 0; --i) {
      std::swap(order[i], order[rng.BelowUnbiased(i + 1)]);
    }
    for (int i = 0; i < shown; ++i) {
      const double relevance = Uniform(rng);
      const double examination = std::pow(1.0 / order[i], eta);
      const bool click =
          Uniform(rng) < examination && Uniform(rng) < relevance;
      data.labels.push_back(click ? 1 : 0);
      data.positions.push_back(order[i]);
      f0.push_back(static_cast<float>(relevance));
      f1.push_back(static_cast<float>(Uniform(rng)));
    }
    data.query_offsets.push_back(static_cast<uint32_t>(data.labels.size()));
    data.query_ids.push_back(std::to_string(q));
  }
  data.features = f0;
  data.features.insert(data.features.end(), f1.begin(), f1.end());
  return data;
}

TEST(PropensityEstimationTest, RegressionEmRecoversTheExaminationCurve) {
  const Dataset log = ClickLog(7, 3000, 6, 1.0);
  absl::StatusOr<PropensityCurve> curve = EstimatePropensities(log);
  ASSERT_TRUE(curve.ok()) << curve.status();
  ASSERT_EQ(curve->theta.size(), 6u);
  EXPECT_DOUBLE_EQ(curve->theta[0], 1.0);
  for (int k = 1; k < 6; ++k) {
    EXPECT_NEAR(curve->theta[k], 1.0 / (k + 1), 0.06) << "position " << k + 1;
  }
  EXPECT_EQ(curve->shown[0], 3000);
}

TEST(PropensityEstimationTest, NeedsPositions) {
  Dataset log = ClickLog(8, 5, 3, 1.0);
  log.positions.clear();
  EXPECT_THAT(std::string(EstimatePropensities(log).status().message()),
              HasSubstr("display position"));
}

TEST(ClickWeightsTest, IpsWeighsClickedDocumentsByInversePropensity) {
  Dataset log = ClickLog(9, 4, 5, 1.0);
  log.labels = {1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0};
  log.positions = {1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1};
  log.weights.assign(20, 2.0f);
  ClickOptions options;
  options.position_debias = PositionDebias::kIps;
  options.position_propensities = {1.0, 0.5, 0.25};  // 4, 5 take 0.25
  options.max_ips_weight = 3.0;
  ClickWeightsInfo info;
  absl::StatusOr<TrainingWeights> weights = TrainingWeightsFor(log, options, &info);
  ASSERT_TRUE(weights.ok()) << weights.status();
  EXPECT_DOUBLE_EQ(weights->document[0], 2.0);       // click at 1
  EXPECT_DOUBLE_EQ(weights->document[1], 2.0);       // no click
  EXPECT_DOUBLE_EQ(weights->document[2], 2.0 * 3);   // 1/0.25 clipped at 3
  EXPECT_DOUBLE_EQ(weights->document[11], 2.0 * 2);  // click at 2
  EXPECT_EQ(info.clipped, 5);  // clicks at positions 3, 5, 3, 4, 5
  // Per-document propensities take precedence.
  log.propensities.assign(20, 0.5f);
  ClickWeightsInfo info2;
  weights = TrainingWeightsFor(log, options, &info2);
  ASSERT_TRUE(weights.ok());
  EXPECT_DOUBLE_EQ(weights->document[2], 4.0);
  EXPECT_TRUE(info2.propensity_curve.empty());
}

TEST(ClickWeightsTest, NothingToWeighIsEmptyAndMissingInputsAreErrors) {
  Dataset log = ClickLog(10, 3, 3, 1.0);
  ClickWeightsInfo info;
  absl::StatusOr<TrainingWeights> none = TrainingWeightsFor(log, {}, &info);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  log.positions.clear();
  ClickOptions ips;
  ips.position_debias = PositionDebias::kIps;
  EXPECT_THAT(std::string(TrainingWeightsFor(log, ips, &info).status().message()),
              HasSubstr("needs propensities"));
  ClickOptions gam;
  gam.position_debias = PositionDebias::kGam;
  EXPECT_THAT(std::string(TrainingWeightsFor(log, gam, &info).status().message()),
              HasSubstr("needs a display position"));
  EXPECT_FALSE(ParsePositionDebias("lightgbm").ok());
}

// The loss the booster's objective sees under gam is L(s + b[pos]): its
// derivative in b_p is the sum of the document gradients shown at p, what
// the Newton step uses.
TEST(PositionBiasTest, BiasDerivativeIsTheSumOfGradientsAtThePosition) {
  const Dataset log = ClickLog(11, 30, 5, 1.0);
  PlackettLuceOptions options = PaperPlackettLuceOptions();
  options.ties = PlTies::kEfron;
  options.topk = 0;
  options.stop_at_lowest_label = true;
  PlackettLuceObjective objective(options);
  ASSERT_TRUE(objective.Init(log, 1).ok());
  std::vector<double> bias = {0.0, -0.3, -0.5, -0.6, -0.9};
  auto loss = [&](const std::vector<double>& b) {
    std::vector<double> s(log.num_documents());
    for (size_t i = 0; i < s.size(); ++i) {
      s[i] = 0.1 * log.value(i, 0) + b[log.positions[i] - 1];
    }
    return objective.Loss(s);
  };
  std::vector<double> s(log.num_documents());
  for (size_t i = 0; i < s.size(); ++i) {
    s[i] = 0.1 * log.value(i, 0) + bias[log.positions[i] - 1];
  }
  std::vector<double> g(s.size()), h(s.size());
  objective.ComputeDerivativesDouble(s, {}, absl::MakeSpan(g), absl::MakeSpan(h));
  for (int p = 0; p < 5; ++p) {
    double sum = 0.0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (log.positions[i] == p + 1) sum += g[i];
    }
    std::vector<double> up = bias, down = bias;
    up[p] += 1e-5;
    down[p] -= 1e-5;
    EXPECT_NEAR(sum, (loss(up) - loss(down)) / 2e-5, 1e-6) << p;
  }
}

// Clicks driven by position alone: gam puts the signal in the bias (b_1 =
// 0, lower positions below) and the trees learn little.
TEST(PositionBiasTest, GamLearnsADecreasingCurveForBothLosses) {
  Dataset log = ClickLog(12, 400, 5, 1.5);
  for (const char* name : {"plrank", "lambdamart"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<Objective> objective;
    if (std::string(name) == "plrank") {
      PlackettLuceOptions options = PaperPlackettLuceOptions();
      options.ties = PlTies::kEfron;
      options.topk = 0;
      options.stop_at_lowest_label = true;
      objective = std::make_unique<PlackettLuceObjective>(options);
    } else {
      objective = std::make_unique<LambdaMartObjective>(LambdaMartOptions{});
    }
    ASSERT_TRUE(objective->Init(log, 1).ok());
    BoosterConfig config;
    config.num_trees = 30;
    config.num_leaves = 4;
    config.min_data_in_leaf = 20;
    config.learning_rate = 0.2;
    PositionBiasConfig bias;
    bias.positions = log.positions;
    BoosterInputs inputs;
    inputs.train = &log;
    inputs.objective = objective.get();
    inputs.position_bias = &bias;
    absl::StatusOr<BoosterResult> result = TrainBooster(config, inputs);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_EQ(result->position_bias.size(), 5u);
    EXPECT_EQ(result->position_bias[0], 0.0);
    for (int p = 1; p < 5; ++p) {
      EXPECT_LT(result->position_bias[p], result->position_bias[p - 1] + 0.05)
          << p;
    }
    EXPECT_LT(result->position_bias[4], -0.5);
  }
}

TEST(PositionBiasTest, MultiOutputAndBadPositionsAreRefused) {
  Dataset log = ClickLog(13, 3, 3, 1.0);
  PlackettLuceObjective objective(PaperPlackettLuceOptions());
  ASSERT_TRUE(objective.Init(log, 1).ok());
  PositionBiasConfig bias;
  std::vector<int32_t> short_positions = {1, 2};
  bias.positions = short_positions;
  BoosterInputs inputs;
  inputs.train = &log;
  inputs.objective = &objective;
  inputs.position_bias = &bias;
  EXPECT_FALSE(TrainBooster(BoosterConfig{}, inputs).ok());
}

}  // namespace
}  // namespace plrank
