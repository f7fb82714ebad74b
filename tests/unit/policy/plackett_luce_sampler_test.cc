// The Plackett-Luce policy against probabilities computed by hand (weights
// 1, 2, 3: total 6) and, for the sampler, frequencies of a fixed-seed run.
#include "core/policy/plackett_luce_sampler.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace plrank {
namespace {

const std::vector<double> kScores = {std::log(1.0), std::log(2.0),
                                     std::log(3.0)};

PlackettLucePolicy MakePolicy(const std::vector<double>& scores,
                              double temperature, size_t top_k) {
  auto policy = PlackettLucePolicy::Create(scores, {temperature, top_k});
  EXPECT_TRUE(policy.ok()) << policy.status();
  return *std::move(policy);
}

TEST(PlackettLucePolicy, PickProbabilitiesOfAGivenRanking) {
  const PlackettLucePolicy policy = MakePolicy(kScores, 1.0, 0);
  const uint32_t order[] = {2, 1, 0};
  const SampledRanking ranking = policy.Score(order);
  ASSERT_EQ(ranking.pick_probabilities.size(), 3u);
  EXPECT_NEAR(ranking.pick_probabilities[0], 3.0 / 6.0, 1e-15);
  EXPECT_NEAR(ranking.pick_probabilities[1], 2.0 / 3.0, 1e-15);
  EXPECT_NEAR(ranking.pick_probabilities[2], 1.0, 1e-15);
  EXPECT_NEAR(ranking.log_probability, std::log(1.0 / 3.0), 1e-14);
  // A prefix: 1 first, then 0 among {0, 2}.
  const uint32_t prefix[] = {1, 0};
  const SampledRanking partial = policy.Score(prefix);
  EXPECT_NEAR(partial.pick_probabilities[0], 2.0 / 6.0, 1e-15);
  EXPECT_NEAR(partial.pick_probabilities[1], 1.0 / 4.0, 1e-15);
  EXPECT_NEAR(partial.log_probability, std::log(2.0 / 24.0), 1e-14);
}

TEST(PlackettLucePolicy, TemperatureDividesTheScores) {
  // Scores 2 ln 2 and 0 at temperature 2 are weights 2 and 1.
  const PlackettLucePolicy policy =
      MakePolicy({0.0, 2.0 * std::log(2.0)}, 2.0, 1);
  EXPECT_EQ(policy.num_positions(), 1u);
  const uint32_t first[] = {1};
  EXPECT_NEAR(policy.Score(first).pick_probabilities[0], 2.0 / 3.0, 1e-15);
}

TEST(PlackettLucePolicy, SampleReportsTheProbabilitiesOfItsDraw) {
  const PlackettLucePolicy policy = MakePolicy(kScores, 1.0, 2);
  const SampledRanking ranking = policy.Sample(7, 3);
  ASSERT_EQ(ranking.order.size(), 2u);
  EXPECT_NE(ranking.order[0], ranking.order[1]);
  const SampledRanking again = policy.Score(ranking.order);
  EXPECT_EQ(ranking.pick_probabilities, again.pick_probabilities);
  EXPECT_EQ(ranking.log_probability, again.log_probability);
}

TEST(PlackettLucePolicy, DrawsAreReproducibleFromTheSeed) {
  std::vector<double> scores(50);
  for (size_t d = 0; d < scores.size(); ++d) scores[d] = std::sin(d * 1.7);
  const PlackettLucePolicy policy = MakePolicy(scores, 0.5, 10);
  EXPECT_EQ(policy.Sample(123).order, policy.Sample(123).order);
  EXPECT_NE(policy.Sample(123).order, policy.Sample(124).order);
  EXPECT_NE(policy.Sample(123, 0).order, policy.Sample(123, 1).order);
}

TEST(PlackettLucePolicy, FirstPickFrequenciesMatchTheWeights) {
  const PlackettLucePolicy policy = MakePolicy(kScores, 1.0, 3);
  constexpr int kDraws = 30000;
  int first[3] = {0, 0, 0};
  int second_given_2_first[3] = {0, 0, 0};
  int two_first = 0;
  for (int s = 0; s < kDraws; ++s) {
    const SampledRanking ranking = policy.Sample(99, s);
    ++first[ranking.order[0]];
    if (ranking.order[0] == 2) {
      ++two_first;
      ++second_given_2_first[ranking.order[1]];
    }
  }
  for (int d = 0; d < 3; ++d) {
    const double p = (d + 1) / 6.0;
    const double sigma = std::sqrt(p * (1 - p) / kDraws);
    EXPECT_NEAR(first[d] / double{kDraws}, p, 4 * sigma) << "document " << d;
  }
  // Given 2 first, 1 follows with probability 2/3.
  const double p = 2.0 / 3.0;
  EXPECT_NEAR(second_given_2_first[1] / double(two_first), p,
              4 * std::sqrt(p * (1 - p) / two_first));
}

TEST(PlackettLucePolicy, MarginalsMatchTheEnumeration) {
  // P(d at position 1) = sum over a != d of w_a / 6 * w_d / (6 - w_a).
  const double expected[3][3] = {{1 / 6.0, 2 / 6.0, 3 / 6.0},
                                 {0.25, 0.4, 0.35},
                                 {7 / 12.0, 4 / 15.0, 0.15}};
  const PlackettLucePolicy policy = MakePolicy(kScores, 1.0, 0);
  const std::vector<double> marginals = policy.EstimateMarginals(4000, 5);
  ASSERT_EQ(marginals.size(), 9u);
  for (int d = 0; d < 3; ++d) {
    // Position 0 is exact whatever the draws.
    EXPECT_NEAR(marginals[d], expected[0][d], 1e-12);
    for (int j = 1; j < 3; ++j) {
      EXPECT_NEAR(marginals[j * 3 + d], expected[j][d], 0.01)
          << "document " << d << " position " << j;
    }
  }
  for (int j = 0; j < 3; ++j) {
    double sum = 0.0;
    for (int d = 0; d < 3; ++d) sum += marginals[j * 3 + d];
    EXPECT_NEAR(sum, 1.0, 0.02) << "position " << j;
  }
}

TEST(PlackettLucePolicy, MarginalsArePositiveWhereverTheyCanBe) {
  // A document far below the others is almost never drawn, yet its
  // marginal at every position stays > 0 (it can be divided by).
  std::vector<double> scores(20, 5.0);
  scores[7] = -30.0;
  const PlackettLucePolicy policy = MakePolicy(scores, 1.0, 5);
  const std::vector<double> marginals = policy.EstimateMarginals(200, 1);
  for (size_t j = 0; j < 5; ++j) {
    EXPECT_GT(marginals[j * 20 + 7], 0.0) << "position " << j;
    EXPECT_LT(marginals[j * 20 + 7], 1e-14) << "position " << j;
  }
}

TEST(PlackettLucePolicy, ExtremeScoresGiveFiniteProbabilities) {
  const PlackettLucePolicy policy =
      MakePolicy({1000.0, -1000.0, 0.0, 999.0}, 0.01, 0);
  const SampledRanking ranking = policy.Sample(3);
  for (double p : ranking.pick_probabilities) {
    EXPECT_TRUE(std::isfinite(p));
    EXPECT_GE(p, 0.0);
    EXPECT_LE(p, 1.0);
  }
  for (double m : policy.EstimateMarginals(10, 3)) {
    EXPECT_TRUE(std::isfinite(m));
  }
}

TEST(PlackettLucePolicy, RefusesBadTemperaturesAndScores) {
  EXPECT_FALSE(PlackettLucePolicy::Create(kScores, {0.0, 0}).ok());
  EXPECT_FALSE(PlackettLucePolicy::Create(kScores, {-1.0, 0}).ok());
  EXPECT_FALSE(PlackettLucePolicy::Create(kScores, {NAN, 0}).ok());
  EXPECT_FALSE(PlackettLucePolicy::Create(kScores, {INFINITY, 0}).ok());
  EXPECT_FALSE(PlackettLucePolicy::Create({}, {1.0, 0}).ok());
  EXPECT_FALSE(PlackettLucePolicy::Create({1.0, NAN}, {1.0, 0}).ok());
  // 1e300 / 1e-10 overflows.
  EXPECT_FALSE(PlackettLucePolicy::Create({1e300}, {1e-10, 0}).ok());
}

}  // namespace
}  // namespace plrank
