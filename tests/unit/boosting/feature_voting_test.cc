#include "core/boosting/feature_voting.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace plrank {
namespace {

TEST(FeatureVotingTest, BallotHoldsTheTopKPositiveGainsOfTheGivenFeatures) {
  // Feature 5 is not in this tree's subset; 2 has no admissible split (0),
  // 3 a NaN gain: neither may be proposed.
  const std::vector<double> gains = {1.0, 4.0, 0.0,
                                     std::numeric_limits<double>::quiet_NaN(),
                                     3.0, 9.0};
  const std::vector<int32_t> features = {0, 1, 2, 3, 4};
  std::vector<double> ballot(6, -1.0);
  CastBallot(gains, features, 2, absl::MakeSpan(ballot));
  EXPECT_EQ(ballot, (std::vector<double>{0.0, 4.0, 0.0, 0.0, 3.0, 0.0}));

  // More seats than positive gains: every positive one, nothing else.
  CastBallot(gains, features, 10, absl::MakeSpan(ballot));
  EXPECT_EQ(ballot, (std::vector<double>{1.0, 4.0, 0.0, 0.0, 3.0, 0.0}));
}

TEST(FeatureVotingTest, EqualGainsGoToTheLowerFeature) {
  const std::vector<double> gains = {2.0, 2.0, 2.0, 1.0};
  std::vector<double> ballot(4);
  CastBallot(gains, std::vector<int32_t>{3, 2, 1, 0}, 2, absl::MakeSpan(ballot));
  EXPECT_EQ(ballot, (std::vector<double>{2.0, 2.0, 0.0, 0.0}));
}

TEST(FeatureVotingTest, ElectionSumsTheRanksBallotsAndKeepsTheLargest) {
  // Three ranks, top_k = 1, over features 0..3. Rank 0 proposes 0 (gain 5),
  // ranks 1 and 2 propose 2 (gains 3 and 3): summed 0 -> 5, 2 -> 6.
  std::vector<double> summed(4, 0.0);
  const std::vector<int32_t> features = {0, 1, 2, 3};
  for (const std::vector<double>& gains :
       {std::vector<double>{5.0, 1.0, 4.0, 0.0},
        std::vector<double>{1.0, 2.0, 3.0, 0.0},
        std::vector<double>{0.5, 0.5, 3.0, 2.0}}) {
    std::vector<double> ballot(4);
    CastBallot(gains, features, 1, absl::MakeSpan(ballot));
    for (size_t f = 0; f < summed.size(); ++f) summed[f] += ballot[f];
  }
  EXPECT_EQ(summed, (std::vector<double>{5.0, 0.0, 6.0, 0.0}));
  // One seat: the larger sum. Two seats: both proposals, ascending; features
  // nobody proposed (1, 3) are never elected, even with seats left.
  EXPECT_EQ(ElectFeatures(summed, features, 1), (std::vector<int32_t>{2}));
  EXPECT_EQ(ElectFeatures(summed, features, 2), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(ElectFeatures(summed, features, 4), (std::vector<int32_t>{0, 2}));
  // Only features of this tree's subset.
  EXPECT_EQ(ElectFeatures(summed, std::vector<int32_t>{0, 1, 3}, 4),
            (std::vector<int32_t>{0}));
}

TEST(FeatureVotingTest, ElectionTiesGoToTheLowerFeature) {
  const std::vector<double> summed = {0.0, 7.0, 7.0, 7.0};
  EXPECT_EQ(ElectFeatures(summed, std::vector<int32_t>{0, 1, 2, 3}, 2),
            (std::vector<int32_t>{1, 2}));
}

}  // namespace
}  // namespace plrank
