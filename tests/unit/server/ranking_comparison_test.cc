#include "server/ranking_comparison.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank::server {
namespace {

using ::testing::ElementsAre;
using ::testing::Optional;
using ::testing::DoubleNear;

// Tau-b by definition, over all pairs: the O(n^2) reference.
std::optional<double> NaiveTauB(const std::vector<double>& a,
                                const std::vector<double>& b) {
  double concordant = 0, discordant = 0, ties_a = 0, ties_b = 0, pairs = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = i + 1; j < a.size(); ++j) {
      ++pairs;
      const double da = a[i] - a[j];
      const double db = b[i] - b[j];
      if (da == 0) ++ties_a;
      if (db == 0) ++ties_b;
      if (da * db > 0) ++concordant;
      if (da * db < 0) ++discordant;
    }
  }
  if (ties_a == pairs || ties_b == pairs) return std::nullopt;
  return (concordant - discordant) /
         std::sqrt((pairs - ties_a) * (pairs - ties_b));
}

TEST(KendallTauBTest, HandComputedCases) {
  // Same order: every pair concordant.
  EXPECT_THAT(KendallTauB({1, 2, 3, 4}, {10, 20, 30, 40}),
              Optional(DoubleNear(1.0, 1e-12)));
  // Reversed: every pair discordant.
  EXPECT_THAT(KendallTauB({1, 2, 3, 4}, {4, 3, 2, 1}),
              Optional(DoubleNear(-1.0, 1e-12)));
  // One adjacent swap of 4: 5 concordant, 1 discordant of 6 -> 4/6.
  EXPECT_THAT(KendallTauB({1, 2, 3, 4}, {1, 3, 2, 4}),
              Optional(DoubleNear(2.0 / 3.0, 1e-12)));
  // Ties in a: a = (1,1,2), b = (1,2,3). Pairs: (0,1) tied in a,
  // (0,2) and (1,2) concordant. tau-b = 2 / sqrt((3-1) * 3) = 2/sqrt(6).
  EXPECT_THAT(KendallTauB({1, 1, 2}, {1, 2, 3}),
              Optional(DoubleNear(2.0 / std::sqrt(6.0), 1e-12)));
  // Ties in both, on the same pair: a = b = (1,1,2) -> 2/sqrt(2*2) = 1.
  EXPECT_THAT(KendallTauB({1, 1, 2}, {5, 5, 7}),
              Optional(DoubleNear(1.0, 1e-12)));
  // a = (1,2,3,4), b = (1,1,2,2): 4 concordant, 0 discordant, 2 ties in b:
  // 4 / sqrt(6 * 4).
  EXPECT_THAT(KendallTauB({1, 2, 3, 4}, {1, 1, 2, 2}),
              Optional(DoubleNear(4.0 / std::sqrt(24.0), 1e-12)));
}

TEST(KendallTauBTest, UndefinedCases) {
  EXPECT_EQ(KendallTauB({}, {}), std::nullopt);
  EXPECT_EQ(KendallTauB({1}, {2}), std::nullopt);
  EXPECT_EQ(KendallTauB({3, 3, 3}, {1, 2, 3}), std::nullopt);
  EXPECT_EQ(KendallTauB({1, 2, 3}, {0, 0, 0}), std::nullopt);
}

TEST(KendallTauBTest, NanRanksLowestTiedWithOtherNans) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // NaN below everything: (nan, 1, 2) orders like (0, 1, 2).
  EXPECT_THAT(KendallTauB({nan, 1, 2}, {0, 1, 2}),
              Optional(DoubleNear(1.0, 1e-12)));
  EXPECT_THAT(KendallTauB({nan, nan, 2}, {0, 0, 2}),
              Optional(DoubleNear(1.0, 1e-12)));
}

TEST(KendallTauBTest, MatchesTheDefinitionOnRandomTiedScores) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 2 + rng() % 40;
    // Few distinct values, so that ties are frequent.
    std::uniform_int_distribution<int> value(0, 1 + trial % 6);
    std::vector<double> a(n), b(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = value(rng);
      b[i] = value(rng);
    }
    const auto expected = NaiveTauB(a, b);
    const auto actual = KendallTauB(a, b);
    ASSERT_EQ(expected.has_value(), actual.has_value()) << "trial " << trial;
    if (expected) {
      EXPECT_NEAR(*actual, *expected, 1e-12) << "trial " << trial;
    }
  }
}

TEST(TopIndicesTest, RanksAsRankDoes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Descending, equal scores in request order, NaN last.
  EXPECT_THAT(TopIndices({1, nan, 3, 3, 2}, 10), ElementsAre(2, 3, 4, 0, 1));
  EXPECT_THAT(TopIndices({1, nan, 3, 3, 2}, 2), ElementsAre(2, 3));
}

TEST(CompareRankingsTest, TopOneAndTopTenOverlap) {
  // 12 documents; b swaps the first two and moves document 11 (last in a)
  // into its top 10, pushing document 9 out.
  std::vector<double> a(12), b(12);
  for (int i = 0; i < 12; ++i) a[i] = b[i] = 100 - i;
  std::swap(b[0], b[1]);
  b[11] = 95.5;  // between documents 4 and 5
  const RankingComparison c = CompareRankings(a, b);
  EXPECT_FALSE(c.top1_agree);
  EXPECT_DOUBLE_EQ(c.top10_overlap, 0.9);
  ASSERT_TRUE(c.kendall_tau.has_value());
  EXPECT_LT(*c.kendall_tau, 1.0);

  const RankingComparison same = CompareRankings(a, a);
  EXPECT_TRUE(same.top1_agree);
  EXPECT_DOUBLE_EQ(same.top10_overlap, 1.0);
  EXPECT_THAT(same.kendall_tau, Optional(DoubleNear(1.0, 1e-12)));
}

TEST(CompareRankingsTest, FewerThanTenDocumentsAndTies) {
  // 3 documents: k = 3. a's top is 0; b ties everything, so request order
  // wins and its top is 0 too; tau-b is undefined (b all tied).
  const RankingComparison c = CompareRankings({3, 2, 1}, {5, 5, 5});
  EXPECT_TRUE(c.top1_agree);
  EXPECT_DOUBLE_EQ(c.top10_overlap, 1.0);
  EXPECT_EQ(c.kendall_tau, std::nullopt);
  // Reversed 4: top-1 differs, overlap of the top 4 is still complete.
  const RankingComparison r = CompareRankings({4, 3, 2, 1}, {1, 2, 3, 4});
  EXPECT_FALSE(r.top1_agree);
  EXPECT_DOUBLE_EQ(r.top10_overlap, 1.0);
  EXPECT_THAT(r.kendall_tau, Optional(DoubleNear(-1.0, 1e-12)));
}

}  // namespace
}  // namespace plrank::server
