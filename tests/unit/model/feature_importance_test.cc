#include "core/model/feature_importance.h"

#include <random>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/random_model.h"

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

// Two trees over three features: feature index 1 is split on twice (gains
// 5 and 1.5), index 0 once (gain 2), index 2 never.
Ensemble HandBuiltModel() {
  Ensemble model;
  model.num_features = 3;
  Tree first;
  first.split_feature = {1, 0};
  first.split_gain = {5.0, 2.0};
  first.threshold = {0.5f, 0.25f};
  first.default_left = {0, 0};
  first.left_child = {1, ~0};
  first.right_child = {~2, ~1};
  first.leaf_value = {0.1, -0.1, 0.2};
  Tree second;
  second.split_feature = {1};
  second.split_gain = {1.5};
  second.threshold = {0.75f};
  second.default_left = {1};
  second.left_child = {~0};
  second.right_child = {~1};
  second.leaf_value = {-0.05, 0.05};
  model.trees = {first, second};
  return model;
}

TEST(FeatureImportanceTest, FormatListsEveryFeatureByGain) {
  Ensemble model = HandBuiltModel();
  model.feature_names = {"bm25", "tf", ""};
  EXPECT_EQ(FormatFeatureImportance(model),
            "# feature importance: 2 of 3 features split on, 3 splits in 2 "
            "trees\n"
            "feature\tgain\tsplits\tname\n"
            "2\t6.5\t2\ttf\n"
            "1\t2\t1\tbm25\n"
            "3\t0\t0\t-\n");
}

TEST(FeatureImportanceTest, FormatWithoutGainsSortsBySplits) {
  Ensemble model = HandBuiltModel();
  model.trees[0].split_feature = {0, 1};  // feature 1: one split per tree
  model.trees[1].split_gain.clear();      // e.g. an XGBoost import
  EXPECT_FALSE(HasSplitGains(model));
  EXPECT_EQ(FormatFeatureImportance(model),
            "# feature importance: 2 of 3 features split on, 3 splits in 2 "
            "trees\n"
            "# gain: unavailable (the model records no split gains); sorted "
            "by splits\n"
            "feature\tgain\tsplits\tname\n"
            "2\t-\t2\t-\n"
            "1\t-\t1\t-\n"
            "3\t-\t0\t-\n");
}

TEST(FeatureImportanceTest, FormatOfALinearModelSaysItHasNoSplits) {
  Ensemble model;
  model.num_features = 2;
  model.linear_weights = {0.5, -0.25};
  EXPECT_EQ(FormatFeatureImportance(model),
            "# feature importance: 0 of 2 features split on, 0 splits in 0 "
            "trees\n"
            "# linear model: no splits (its weights are in --dump)\n"
            "feature\tgain\tsplits\tname\n"
            "1\t0\t0\t-\n"
            "2\t0\t0\t-\n");
}

}  // namespace
}  // namespace plrank
