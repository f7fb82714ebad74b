#include "core/boosting/booster.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/boosting_test_util.h"

namespace plrank {
namespace {

using testing::LeafOf;
using testing::MakeDataset;
using testing::Predict;
using testing::RandomDataset;
using testing::SquaredLoss;

BoosterResult Train(const BoosterConfig& config, const Dataset& train,
                    Objective* objective, const Dataset* valid = nullptr,
                    Evaluator valid_evaluator = nullptr) {
  EXPECT_TRUE(objective->Init(train, config.seed).ok());
  BoosterInputs inputs;
  inputs.train = &train;
  inputs.objective = objective;
  inputs.valid = valid;
  inputs.valid_evaluator = std::move(valid_evaluator);
  absl::StatusOr<BoosterResult> result = TrainBooster(config, inputs);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : BoosterResult{};
}

// Every leaf is reached by exactly one edge, every node but the root too.
void ExpectWellFormed(const Tree& tree) {
  const int32_t nodes = tree.num_internal_nodes();
  ASSERT_EQ(tree.num_leaves(), nodes + 1);
  std::vector<int> node_refs(nodes, 0), leaf_refs(tree.num_leaves(), 0);
  for (int32_t n = 0; n < nodes; ++n) {
    for (int32_t child : {tree.left_child[n], tree.right_child[n]}) {
      if (child >= 0) {
        ASSERT_LT(child, nodes);
        ++node_refs[child];
      } else {
        ASSERT_LT(~child, tree.num_leaves());
        ++leaf_refs[~child];
      }
    }
  }
  for (int32_t n = 1; n < nodes; ++n) EXPECT_EQ(node_refs[n], 1);
  if (nodes > 0) {
    EXPECT_EQ(node_refs[0], 0);
  }
  for (int r : leaf_refs) EXPECT_EQ(r, nodes > 0 ? 1 : 0);
}

template <typename T>
bool BitwiseEqual(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), sizeof(T) * a.size()) == 0);
}

bool TreesIdentical(const std::vector<Tree>& a, const std::vector<Tree>& b) {
  if (a.size() != b.size()) return false;
  for (size_t t = 0; t < a.size(); ++t) {
    if (!BitwiseEqual(a[t].split_feature, b[t].split_feature) ||
        !BitwiseEqual(a[t].threshold, b[t].threshold) ||
        !BitwiseEqual(a[t].default_left, b[t].default_left) ||
        !BitwiseEqual(a[t].left_child, b[t].left_child) ||
        !BitwiseEqual(a[t].right_child, b[t].right_child) ||
        !BitwiseEqual(a[t].split_gain, b[t].split_gain) ||
        !BitwiseEqual(a[t].leaf_value, b[t].leaf_value) ||
        !BitwiseEqual(a[t].leaf_count, b[t].leaf_count)) {
      return false;
    }
  }
  return true;
}

BoosterConfig SmallConfig() {
  BoosterConfig config;
  config.num_trees = 1;
  config.num_leaves = 2;
  config.learning_rate = 1.0;
  config.min_data_in_leaf = 1;
  config.num_threads = 2;
  return config;
}

TEST(BoosterTest, FindsTheObviousSplitAndLeafValues) {
  std::vector<float> x, noise;
  std::vector<int32_t> labels;
  for (int i = 0; i < 100; ++i) {
    x.push_back(static_cast<float>(i));
    noise.push_back(static_cast<float>((i * 37) % 11));
    labels.push_back(i < 50 ? 0 : 2);
  }
  const Dataset data = MakeDataset({noise, x}, labels);
  SquaredLoss objective;
  const BoosterResult result = Train(SmallConfig(), data, &objective);
  ASSERT_EQ(result.trees.size(), 1u);
  const Tree& tree = result.trees[0];
  ASSERT_EQ(tree.num_internal_nodes(), 1);
  EXPECT_EQ(tree.split_feature[0], 1);
  EXPECT_GE(tree.threshold[0], 49.0f);
  EXPECT_LT(tree.threshold[0], 50.0f);
  EXPECT_EQ(tree.default_left[0], 1);  // no missing values: left by convention
  const int32_t left = ~tree.left_child[0], right = ~tree.right_child[0];
  EXPECT_DOUBLE_EQ(tree.leaf_value[left], 0.0);  // mean label, learning rate 1
  EXPECT_DOUBLE_EQ(tree.leaf_value[right], 2.0);
  EXPECT_EQ(tree.leaf_count[left], 50);
  EXPECT_EQ(tree.leaf_count[right], 50);
  EXPECT_GT(tree.split_gain[0], 0.0);
  EXPECT_EQ(result.best_iteration, 1);
  EXPECT_EQ(result.num_features, 2);
}

TEST(BoosterTest, LearnsThatMissingValuesGoRight) {
  std::vector<float> x;
  std::vector<int32_t> labels;
  for (int i = 0; i < 100; ++i) {
    x.push_back(static_cast<float>(i));
    labels.push_back(i < 50 ? 0 : 3);
  }
  for (int i = 0; i < 30; ++i) {
    x.push_back(std::numeric_limits<float>::quiet_NaN());
    labels.push_back(3);
  }
  const Dataset data = MakeDataset({x}, labels);
  SquaredLoss objective;
  const BoosterResult result = Train(SmallConfig(), data, &objective);
  const Tree& tree = result.trees[0];
  ASSERT_EQ(tree.num_internal_nodes(), 1);
  EXPECT_GE(tree.threshold[0], 49.0f);
  EXPECT_LT(tree.threshold[0], 50.0f);
  EXPECT_EQ(tree.default_left[0], 0);
  EXPECT_DOUBLE_EQ(tree.leaf_value[~tree.right_child[0]], 3.0);
  EXPECT_EQ(tree.leaf_count[~tree.right_child[0]], 80);

  // Mirror image: missing documents look like the low ones, so go left.
  for (int i = 100; i < 130; ++i) labels[i] = 0;
  const Dataset mirrored = MakeDataset({x}, labels);
  const BoosterResult again = Train(SmallConfig(), mirrored, &objective);
  EXPECT_EQ(again.trees[0].default_left[0], 1);
}

TEST(BoosterTest, PresentLeftMissingRightSplitHasAFiniteThreshold) {
  // The best split sends every present value left and only NaN right: its
  // bin bound is +inf, which a model artifact cannot hold.
  std::vector<float> x;
  std::vector<int32_t> labels;
  for (int i = 0; i < 100; ++i) {
    x.push_back(static_cast<float>(i % 7));
    labels.push_back(0);
  }
  for (int i = 0; i < 40; ++i) {
    x.push_back(std::numeric_limits<float>::quiet_NaN());
    labels.push_back(4);
  }
  const Dataset data = MakeDataset({x}, labels);
  SquaredLoss objective;
  const BoosterResult result = Train(SmallConfig(), data, &objective);
  const Tree& tree = result.trees[0];
  ASSERT_GE(tree.num_internal_nodes(), 1);
  for (float threshold : tree.threshold) EXPECT_TRUE(std::isfinite(threshold));
  EXPECT_EQ(tree.default_left[0], 0);
  EXPECT_EQ(tree.threshold[0], std::numeric_limits<float>::max());
}

TEST(BoosterTest, GrowsNumLeavesAndRespectsMinDataInLeaf) {
  const Dataset data = RandomDataset(4000, 6, 5);
  SquaredLoss objective;
  BoosterConfig config = SmallConfig();
  config.num_trees = 3;
  config.num_leaves = 31;
  const BoosterResult result = Train(config, data, &objective);
  for (const Tree& tree : result.trees) {
    EXPECT_EQ(tree.num_leaves(), 31);
    ExpectWellFormed(tree);
    EXPECT_EQ(std::accumulate(tree.leaf_count.begin(), tree.leaf_count.end(), 0), 4000);
  }
  config.num_leaves = 200;
  config.min_data_in_leaf = 150;
  const BoosterResult limited = Train(config, data, &objective);
  for (const Tree& tree : limited.trees) {
    ExpectWellFormed(tree);
    EXPECT_LT(tree.num_leaves(), 200);
    EXPECT_GT(tree.num_leaves(), 5);
    for (int32_t count : tree.leaf_count) EXPECT_GE(count, 150);
  }
}

// Depth of every leaf (the root's children are at depth 1).
std::vector<int32_t> LeafDepths(const Tree& tree) {
  std::vector<int32_t> depths(tree.num_leaves(), 0);
  if (tree.num_internal_nodes() == 0) return depths;
  std::vector<std::pair<int32_t, int32_t>> stack = {{0, 0}};  // node, depth
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    for (int32_t child : {tree.left_child[node], tree.right_child[node]}) {
      if (child >= 0) {
        stack.push_back({child, depth + 1});
      } else {
        depths[~child] = depth + 1;
      }
    }
  }
  return depths;
}

// Three trees that reach 31 leaves on RandomDataset(4000, 6, 5) unless a
// limit stops them.
BoosterConfig ThreeFullTreesConfig() {
  BoosterConfig config = SmallConfig();
  config.num_trees = 3;
  config.num_leaves = 31;
  config.min_data_in_leaf = 20;
  return config;
}

TEST(BoosterTest, MaxDepthBoundsEveryLeafAndBinds) {
  const Dataset data = RandomDataset(4000, 6, 5);
  SquaredLoss objective;
  BoosterConfig config = ThreeFullTreesConfig();
  for (int32_t max_depth : {1, 2, 3}) {
    SCOPED_TRACE(max_depth);
    config.max_depth = max_depth;
    const BoosterResult result = Train(config, data, &objective);
    ASSERT_EQ(result.trees.size(), 3u);
    for (const Tree& tree : result.trees) {
      ExpectWellFormed(tree);
      const std::vector<int32_t> depths = LeafDepths(tree);
      // Without the limit these trees have 31 leaves, so it binds: a full
      // tree of that depth.
      EXPECT_EQ(tree.num_leaves(), 1 << max_depth);
      for (int32_t depth : depths) EXPECT_EQ(depth, max_depth);
    }
  }
  config.max_depth = 0;  // no limit
  for (const Tree& tree : Train(config, data, &objective).trees) {
    EXPECT_EQ(tree.num_leaves(), 31);
    const std::vector<int32_t> depths = LeafDepths(tree);
    EXPECT_GT(*std::max_element(depths.begin(), depths.end()), 5);
  }
}

TEST(BoosterTest, MinGainToSplitKeepsOnlyLargerGains) {
  const Dataset data = RandomDataset(4000, 6, 5);
  SquaredLoss objective;
  BoosterConfig config = ThreeFullTreesConfig();
  const BoosterResult free = Train(config, data, &objective);
  std::vector<double> gains = free.trees[0].split_gain;
  ASSERT_EQ(gains.size(), 30u);
  std::sort(gains.begin(), gains.end());
  config.min_gain_to_split = gains[gains.size() / 2];
  const BoosterResult limited = Train(config, data, &objective);
  // Same first split; then only gains above the bar.
  ASSERT_FALSE(limited.trees[0].split_gain.empty());
  EXPECT_EQ(limited.trees[0].split_gain[0], free.trees[0].split_gain[0]);
  EXPECT_LT(limited.trees[0].num_leaves(), 31);
  for (const Tree& tree : limited.trees) {
    ExpectWellFormed(tree);
    for (double gain : tree.split_gain)
      EXPECT_GT(gain, config.min_gain_to_split);
  }
  config.min_gain_to_split = 1e300;  // nothing passes: single-leaf trees
  for (const Tree& tree : Train(config, data, &objective).trees) {
    EXPECT_EQ(tree.num_leaves(), 1);
  }
}

// Train scores seen by the evaluator must equal routing raw values through
// the trees: binned training partitions agree exactly with x <= threshold,
// for in-bag and out-of-bag documents alike, and likewise on validation data
// with values the bins never saw.
TEST(BoosterTest, TreesReproduceTrainAndValidScoresExactly) {
  const Dataset train = RandomDataset(3000, 8, 21);
  const Dataset valid = RandomDataset(1000, 8, 22);
  SquaredLoss objective;
  BoosterConfig config;
  config.num_trees = 15;
  config.num_leaves = 15;
  config.min_data_in_leaf = 5;
  config.bagging_fraction = 0.6;
  config.bagging_freq = 2;
  config.feature_fraction = 0.7;
  config.max_bin = 31;
  config.num_threads = 2;
  ASSERT_TRUE(objective.Init(train, 1).ok());
  std::vector<double> train_scores, valid_scores;
  BoosterInputs inputs;
  inputs.train = &train;
  inputs.valid = &valid;
  inputs.objective = &objective;
  inputs.init_train_scores.assign(train.num_documents(), 0.25);
  inputs.init_valid_scores.assign(valid.num_documents(), 0.25);
  inputs.train_evaluator = [&](absl::Span<const double> s) {
    train_scores.assign(s.begin(), s.end());
    return 0.0;
  };
  inputs.valid_evaluator = [&](absl::Span<const double> s) {
    valid_scores.assign(s.begin(), s.end());
    return 0.0;
  };
  const absl::StatusOr<BoosterResult> result = TrainBooster(config, inputs);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->trees.size(), 15u);
  std::vector<double> expected_train = Predict(result->trees, 1, train);
  std::vector<double> expected_valid = Predict(result->trees, 1, valid);
  // Same additions in the same order as the booster: exact equality.
  for (size_t i = 0; i < train.num_documents(); ++i) {
    double s = 0.25;
    for (const Tree& t : result->trees) s += t.leaf_value[LeafOf(t, train, i)];
    ASSERT_EQ(train_scores[i], s) << i;
  }
  for (size_t i = 0; i < valid.num_documents(); ++i) {
    double s = 0.25;
    for (const Tree& t : result->trees) s += t.leaf_value[LeafOf(t, valid, i)];
    ASSERT_EQ(valid_scores[i], s) << i;
  }
}

TEST(BoosterTest, BaggingIsByQueryAndOutOfBagDocumentsHaveNoLeaf) {
  const Dataset data = RandomDataset(2000, 5, 8, /*query_size=*/20);
  SquaredLoss objective;
  BoosterConfig config;
  config.num_trees = 1;
  config.bagging_fraction = 0.25;
  config.bagging_freq = 1;
  const BoosterResult result = Train(config, data, &objective);
  ASSERT_EQ(objective.last_query_in_bag.size(), data.num_queries());
  EXPECT_EQ(std::accumulate(objective.last_query_in_bag.begin(),
                            objective.last_query_in_bag.end(), 0),
            25);
  ASSERT_EQ(objective.last_leaf_of_document.size(), data.num_documents());
  int in_bag = 0;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    for (uint32_t i = data.query_begin(q); i < data.query_end(q); ++i) {
      if (objective.last_query_in_bag[q]) {
        EXPECT_GE(objective.last_leaf_of_document[i], 0);
        EXPECT_EQ(objective.last_leaf_of_document[i], LeafOf(result.trees[0], data, i));
        ++in_bag;
      } else {
        EXPECT_EQ(objective.last_leaf_of_document[i], -1);
      }
    }
  }
  EXPECT_EQ(std::accumulate(result.trees[0].leaf_count.begin(),
                            result.trees[0].leaf_count.end(), 0),
            in_bag);
}

TEST(BoosterTest, IdenticalTreesWhateverTheThreadCount) {
  const Dataset data = RandomDataset(40000, 12, 13);
  for (SplitGain gain : {SplitGain::kLeastSquares, SplitGain::kNewton}) {
    // Without bagging the root is one contiguous run (column kernel); with
    // it every leaf goes through the row kernel.
    for (bool sampling : {false, true}) {
      BoosterConfig config;
      config.num_trees = 4;
      config.num_leaves = 31;
      config.split_gain = gain;
      config.lambda_l2 = 1.0;
      if (sampling) {
        config.bagging_fraction = 0.8;
        config.bagging_freq = 1;
        config.feature_fraction = 0.8;
      }
      std::vector<std::vector<Tree>> runs;
      for (int32_t threads : {1, 2, 4}) {
        config.num_threads = threads;
        SquaredLoss objective;
        runs.push_back(Train(config, data, &objective).trees);
      }
      ASSERT_EQ(runs[0].size(), 4u);
      EXPECT_TRUE(TreesIdentical(runs[0], runs[1])) << sampling;
      EXPECT_TRUE(TreesIdentical(runs[0], runs[2])) << sampling;
    }
  }
}

TEST(BoosterTest, SamplingIsDeterministicBySeed) {
  const Dataset data = RandomDataset(3000, 10, 17);
  BoosterConfig config;
  config.num_trees = 5;
  config.num_leaves = 8;
  config.bagging_fraction = 0.5;
  config.bagging_freq = 1;
  config.feature_fraction = 0.5;
  SquaredLoss objective;
  config.seed = 4;
  const auto a = Train(config, data, &objective).trees;
  const auto b = Train(config, data, &objective).trees;
  config.seed = 5;
  const auto c = Train(config, data, &objective).trees;
  EXPECT_TRUE(TreesIdentical(a, b));
  EXPECT_FALSE(TreesIdentical(a, c));
  // With half of the features per tree, no tree may use more than half.
  for (const Tree& tree : a) {
    std::vector<int32_t> used(tree.split_feature);
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    EXPECT_LE(used.size(), 5u);
  }
}

TEST(BoosterTest, EarlyStoppingTruncatesToTheBestIteration) {
  const Dataset train = RandomDataset(1000, 4, 2);
  const Dataset valid = RandomDataset(200, 4, 3);
  SquaredLoss objective;
  BoosterConfig config;
  config.num_trees = 50;
  config.num_leaves = 4;
  config.early_stopping_rounds = 3;
  int calls = 0;
  // Improves for 5 iterations, then gets worse.
  const BoosterResult result =
      Train(config, train, &objective, &valid, [&](absl::Span<const double>) {
        ++calls;
        return calls <= 5 ? calls : 5.0 - calls;
      });
  EXPECT_EQ(result.history.size(), 8u);
  EXPECT_EQ(result.best_iteration, 5);
  EXPECT_EQ(result.trees.size(), 5u);
  EXPECT_DOUBLE_EQ(result.history[4].valid_metric, 5.0);

  config.early_stopping_rounds = 0;
  calls = 0;
  const BoosterResult all =
      Train(config, train, &objective, &valid, [&](absl::Span<const double>) {
        return -static_cast<double>(++calls);
      });
  EXPECT_EQ(all.best_iteration, 50);
  EXPECT_EQ(all.trees.size(), 50u);
}

TEST(BoosterTest, TrainingLossDecreases) {
  const Dataset data = RandomDataset(5000, 6, 31);
  for (SplitGain gain : {SplitGain::kLeastSquares, SplitGain::kNewton}) {
    SquaredLoss objective;
    BoosterConfig config;
    config.num_trees = 40;
    config.num_leaves = 15;
    config.split_gain = gain;
    const BoosterResult result = Train(config, data, &objective);
    ASSERT_EQ(result.history.size(), 40u);
    for (size_t i = 1; i < result.history.size(); ++i) {
      EXPECT_LT(result.history[i].train_loss, result.history[i - 1].train_loss);
    }
    std::vector<double> zero(data.num_documents(), 0.0);
    EXPECT_LT(result.history.back().train_loss, 0.2 * objective.Loss(zero));
  }
}

TEST(BoosterTest, MultiOutputGrowsOneTreePerOutput) {
  const Dataset data = RandomDataset(3000, 6, 41);
  SquaredLoss objective(2);
  BoosterConfig config;
  config.num_trees = 30;
  config.num_leaves = 8;
  config.learning_rate = 0.3;
  const BoosterResult result = Train(config, data, &objective);
  ASSERT_EQ(result.trees.size(), 60u);
  const std::vector<double> scores = Predict(result.trees, 2, data);
  const size_t n = data.num_documents();
  for (int32_t k = 0; k < 2; ++k) {
    double before = 0.0, after = 0.0;
    for (size_t i = 0; i < n; ++i) {
      const double target = SquaredLoss::Target(k, data.labels[i]);
      before += target * target;
      after += (scores[k * n + i] - target) * (scores[k * n + i] - target);
    }
    EXPECT_LT(after, 0.2 * before) << "output " << k;
  }
  EXPECT_NEAR(result.history.back().train_loss, objective.Loss(scores), 1e-6);
}

TEST(BoosterTest, RejectsBadConfigs) {
  const Dataset data = RandomDataset(100, 2, 1);
  SquaredLoss objective;
  ASSERT_TRUE(objective.Init(data, 1).ok());
  BoosterInputs inputs;
  inputs.train = &data;
  inputs.objective = &objective;
  BoosterConfig config;
  config.max_bin = 256;
  EXPECT_FALSE(TrainBooster(config, inputs).ok());
  config = BoosterConfig{};
  config.feature_fraction = 0.0;
  EXPECT_FALSE(TrainBooster(config, inputs).ok());
  // NaN and infinities are refused, not let through to silently stop every
  // split (a NaN lambda or minimum hessian) or to make infinite leaves.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double BoosterConfig::*field :
       {&BoosterConfig::lambda_l2, &BoosterConfig::min_sum_hessian_in_leaf,
        &BoosterConfig::min_gain_to_split, &BoosterConfig::learning_rate}) {
    for (double bad : {nan, inf, -1.0}) {
      config = BoosterConfig{};
      config.*field = bad;
      const absl::Status status = ValidateBoosterConfig(config);
      EXPECT_FALSE(status.ok()) << bad;
      EXPECT_FALSE(TrainBooster(config, inputs).ok()) << bad;
    }
  }
  config = BoosterConfig{};
  config.min_gain_to_split = 0.5;
  config.max_depth = -3;  // no limit
  EXPECT_TRUE(ValidateBoosterConfig(config).ok());
  config = BoosterConfig{};
  inputs.init_train_scores.assign(3, 0.0);
  EXPECT_FALSE(TrainBooster(config, inputs).ok());
  EXPECT_FALSE(TrainBooster(BoosterConfig{}, BoosterInputs{}).ok());
}

}  // namespace
}  // namespace plrank
