#include "core/boosting/sampling.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"

namespace plrank {
namespace {

TEST(SamplingTest, QueryBagHasExactSizeAndDependsOnlyOnSeedAndDraw) {
  const auto bag = DrawQueryBag(1000, 0.3, 5, 2);
  EXPECT_EQ(std::accumulate(bag.begin(), bag.end(), 0), 300);
  EXPECT_EQ(bag, DrawQueryBag(1000, 0.3, 5, 2));
  EXPECT_NE(bag, DrawQueryBag(1000, 0.3, 5, 3));
  EXPECT_NE(bag, DrawQueryBag(1000, 0.3, 6, 2));
  const auto all = DrawQueryBag(10, 1.0, 5, 2);
  EXPECT_EQ(std::accumulate(all.begin(), all.end(), 0), 10);
  const auto one = DrawQueryBag(10, 0.01, 5, 2);
  EXPECT_EQ(std::accumulate(one.begin(), one.end(), 0), 1);
}

TEST(SamplingTest, FeatureSubsetIsSortedUniqueAndSeeded) {
  const auto subset = DrawFeatureSubset(136, 0.5, 9, 4);
  ASSERT_EQ(subset.size(), 68u);
  EXPECT_TRUE(std::is_sorted(subset.begin(), subset.end()));
  EXPECT_EQ(std::adjacent_find(subset.begin(), subset.end()), subset.end());
  EXPECT_GE(subset.front(), 0);
  EXPECT_LT(subset.back(), 136);
  EXPECT_EQ(subset, DrawFeatureSubset(136, 0.5, 9, 4));
  EXPECT_NE(subset, DrawFeatureSubset(136, 0.5, 9, 5));
  EXPECT_EQ(DrawFeatureSubset(5, 1.0, 9, 4), (std::vector<int32_t>{0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace plrank
