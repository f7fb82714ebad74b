#include "core/policy/counterfactual.h"

#include <cmath>
#include <vector>

#include "core/data/random.h"
#include "core/policy/plackett_luce_sampler.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

// Two documents, one position; mu(0, 0) = 0.25, mu(1, 0) = 0.75.
LoggedRanking OnePosition(uint32_t shown, bool clicked) {
  LoggedRanking ranking;
  ranking.num_positions = 1;
  ranking.marginals = {0.25, 0.75};
  ranking.shown_at = {0, 0};
  ranking.clicked = {0, 0};
  ranking.shown_at[shown] = 1;
  ranking.clicked[shown] = clicked ? 1 : 0;
  return ranking;
}

TEST(Counterfactual, HandComputedIpsAndSnips) {
  const std::vector<LoggedRanking> logged = {OnePosition(0, true),
                                             OnePosition(1, false)};
  const std::vector<std::vector<uint32_t>> candidate = {{0, 1}, {0, 1}};
  auto estimate = EstimateCandidate(logged, candidate, 1);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  // IPS: (1 / 0.25 + 0) / 2; weights 4 and 0: SNIPS = 4 / 4.
  EXPECT_DOUBLE_EQ(estimate->ips_clicks.value, 2.0);
  EXPECT_DOUBLE_EQ(estimate->snips_clicks.value, 1.0);
  EXPECT_DOUBLE_EQ(estimate->ips_dcg.value, 2.0);  // gain 1 at position 1
  EXPECT_DOUBLE_EQ(estimate->logged_clicks.value, 0.5);
  EXPECT_DOUBLE_EQ(estimate->mean_weight, 2.0);
  // Sample sd of (4, 0) is 2 sqrt(2); half-width 1.96 * 2 sqrt(2) / sqrt(2).
  EXPECT_NEAR(estimate->ips_clicks.high - estimate->ips_clicks.value,
              1.959963984540054 * 2.0, 1e-9);
  EXPECT_EQ(estimate->placements, 2u);
}

TEST(Counterfactual, RefusesCandidatesWithoutSupportAndSaysHowMany) {
  LoggedRanking deterministic = OnePosition(0, true);
  deterministic.marginals = {1.0, 0.0};
  const std::vector<LoggedRanking> logged = {deterministic, deterministic};
  const std::vector<std::vector<uint32_t>> candidate = {{1, 0}, {0, 1}};
  auto estimate = EstimateCandidate(logged, candidate, 1);
  ASSERT_FALSE(estimate.ok());
  EXPECT_EQ(estimate.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(estimate.status().message().find("1 of 2"), std::string::npos)
      << estimate.status();
  // The logging policy's own ranking is supported.
  EXPECT_TRUE(EstimateCandidate(logged, {{0, 1}, {0, 1}}, 1).ok());
}

TEST(Counterfactual, RefusesInconsistentInput) {
  const std::vector<LoggedRanking> logged = {OnePosition(0, true)};
  EXPECT_FALSE(EstimateCandidate(logged, {}, 1).ok());
  EXPECT_FALSE(EstimateCandidate(logged, {{}}, 1).ok());
  EXPECT_FALSE(EstimateCandidate(logged, {{5, 0}}, 1).ok());
  EXPECT_FALSE(EstimateCandidate({}, {}, 1).ok());
}

// Logs drawn from a Plackett-Luce policy with clicks from a position-based
// model: the IPS estimate of another ranking's expected clicks covers its
// true value, which the logged clicks do not.
TEST(Counterfactual, IpsRecoversTheCandidatesExpectedClicks) {
  const std::vector<double> scores = {std::log(1.0), std::log(2.0),
                                      std::log(3.0)};
  auto policy = PlackettLucePolicy::Create(scores, {1.0, 2});
  ASSERT_TRUE(policy.ok());
  const double examination[2] = {1.0, 0.5};
  const double relevance[3] = {0.9, 0.5, 0.1};
  const std::vector<double> marginals = policy->EstimateMarginals(20000, 4);
  constexpr int kLogs = 20000;
  std::vector<LoggedRanking> logged(kLogs);
  Xoshiro256 clicks(11, 0);
  for (int i = 0; i < kLogs; ++i) {
    const SampledRanking drawn = policy->Sample(8, i);
    LoggedRanking& ranking = logged[i];
    ranking.num_positions = 2;
    ranking.marginals = marginals;
    ranking.shown_at.assign(3, 0);
    ranking.clicked.assign(3, 0);
    for (uint32_t j = 0; j < 2; ++j) {
      const uint32_t d = drawn.order[j];
      ranking.shown_at[d] = j + 1;
      ranking.clicked[d] =
          clicks.Uniform() < examination[j] * relevance[d] ? 1 : 0;
    }
  }
  const std::vector<std::vector<uint32_t>> candidate(kLogs, {0, 1, 2});
  auto estimate = EstimateCandidate(logged, candidate, 2);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  const double truth = 1.0 * 0.9 + 0.5 * 0.5;  // 1.15
  EXPECT_LT(estimate->ips_clicks.low, truth);
  EXPECT_GT(estimate->ips_clicks.high, truth);
  EXPECT_LT(estimate->snips_clicks.low, truth);
  EXPECT_GT(estimate->snips_clicks.high, truth);
  EXPECT_NEAR(estimate->mean_weight, 1.0, 0.05);
  // The logging policy favours the worse documents.
  EXPECT_LT(estimate->logged_clicks.high, truth - 0.2);
  const double dcg_truth = 0.9 + 0.25 / std::log2(3.0);
  EXPECT_NEAR(estimate->ips_dcg.value, dcg_truth, 0.05);
}

}  // namespace
}  // namespace plrank
