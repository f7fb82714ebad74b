#include "core/model/feature_importance.h"

#include <random>

#include "gtest/gtest.h"
#include "tests/unit/model/random_model.h"

namespace plrank {
namespace {

TEST(FeatureImportanceTest, CountsAndGainsMatchSplits) {
  std::mt19937_64 rng(2);
  Ensemble model = testing::RandomEnsemble(rng, 30, 20, 7);
  std::vector<double> counts(7, 0.0), gains(7, 0.0);
  for (const Tree& tree : model.trees) {
    for (int32_t n = 0; n < tree.num_internal_nodes(); ++n) {
      counts[tree.split_feature[n]] += 1;
      gains[tree.split_feature[n]] += tree.split_gain[n];
    }
  }
  EXPECT_EQ(FeatureImportance(model, false), counts);
  std::vector<double> by_gain = FeatureImportance(model, true);
  ASSERT_EQ(by_gain.size(), 7u);
  for (int f = 0; f < 7; ++f) EXPECT_DOUBLE_EQ(by_gain[f], gains[f]);
}

}  // namespace
}  // namespace plrank
