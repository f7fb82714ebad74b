// TreeSHAP (core/explain/tree_shap.h, ensemble_explainer.h) against a
// brute-force Shapley computation: every feature subset S, with the same
// path-dependent conditional expectation E[f(x) | x_S].

#include "core/explain/tree_shap.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "core/model/ensemble.h"
#include "core/explain/ensemble_explainer.h"
#include "core/scoring/forest_scorer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/random_model.h"

namespace plrank {
namespace {

using ::plrank::testing::RandomEnsemble;
using ::plrank::testing::RandomRows;
using ::plrank::testing::RandomTree;
using ::plrank::testing::ReferenceRaw;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Covers straight from the definition: a leaf's count, an internal node's
// sum over its children; a node with cover 0 splits 1/2 : 1/2.
double Cover(const Tree& tree, int32_t child) {
  if (child < 0) {
    return tree.leaf_count.empty() ? 0.0 : tree.leaf_count[~child];
  }
  return Cover(tree, tree.left_child[child]) +
         Cover(tree, tree.right_child[child]);
}

bool Left(const Tree& tree, int32_t node, float value) {
  const bool missing =
      std::isnan(value) || (tree.treats_zero_as_missing(node) &&
                            std::fabs(value) <= kZeroAsMissingBound);
  return missing ? tree.default_left[node] != 0 : value <= tree.threshold[node];
}

// E[f(x) | x_S], path-dependent: splits on features in S follow the row,
// the others average their children by cover.
double ConditionalExpectation(const Tree& tree, int32_t child, const float* row,
                              const std::set<int32_t>& s) {
  if (child < 0) return tree.leaf_value[~child];
  const int32_t node = child;
  const int32_t feature = tree.split_feature[node];
  if (s.count(feature)) {
    return ConditionalExpectation(tree,
                                  Left(tree, node, row[feature])
                                      ? tree.left_child[node]
                                      : tree.right_child[node],
                                  row, s);
  }
  const double total = Cover(tree, node);
  const double left_share =
      total > 0 ? Cover(tree, tree.left_child[node]) / total : 0.5;
  return left_share *
             ConditionalExpectation(tree, tree.left_child[node], row, s) +
         (1 - left_share) *
             ConditionalExpectation(tree, tree.right_child[node], row, s);
}

double TreeValue(const Tree& tree, const float* row,
                 const std::set<int32_t>& s) {
  if (tree.num_internal_nodes() == 0) return tree.leaf_value[0];
  return ConditionalExpectation(tree, 0, row, s);
}

// phi_i = sum over S without i of |S|! (M - |S| - 1)! / M! (v(S+i) - v(S)),
// M = the features the tree splits on (others get 0).
std::vector<double> BruteForceShap(const Tree& tree, const float* row,
                                   int32_t num_features) {
  std::vector<double> phi(num_features, 0.0);
  const std::set<int32_t> used(tree.split_feature.begin(),
                               tree.split_feature.end());
  const std::vector<int32_t> players(used.begin(), used.end());
  const int m = static_cast<int>(players.size());
  std::vector<double> factorial(m + 1, 1.0);
  for (int k = 1; k <= m; ++k) factorial[k] = factorial[k - 1] * k;
  for (int i = 0; i < m; ++i) {
    for (uint32_t mask = 0; mask < (1u << m); ++mask) {
      if (mask & (1u << i)) continue;
      std::set<int32_t> s;
      for (int j = 0; j < m; ++j) {
        if (mask & (1u << j)) s.insert(players[j]);
      }
      const int size = static_cast<int>(s.size());
      const double weight =
          factorial[size] * factorial[m - size - 1] / factorial[m];
      std::set<int32_t> with_i = s;
      with_i.insert(players[i]);
      phi[players[i]] +=
          weight * (TreeValue(tree, row, with_i) - TreeValue(tree, row, s));
    }
  }
  return phi;
}

std::vector<double> TreeShapOf(const Tree& tree, const float* row,
                               int32_t num_features) {
  ShapTree shap(tree);
  std::vector<double> phi(num_features, 0.0);
  std::vector<ShapTree::PathElement> scratch;
  shap.AddContributions(absl::MakeConstSpan(row, num_features),
                        absl::MakeSpan(phi), &scratch);
  return phi;
}

void ExpectNear(const std::vector<double>& actual,
                const std::vector<double>& expected, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t f = 0; f < actual.size(); ++f) {
    EXPECT_NEAR(actual[f], expected[f], 1e-9) << what << " feature " << f;
  }
}

// x0 <= 0.5 ? (x1 <= 1 ? 1 : 2) : 4, a repeated feature further down on
// the right: x0 <= 2 ? 4 : 8. Counts 10, 30 | 20, 40.
Tree HandTree() {
  Tree tree;
  tree.split_feature = {0, 1, 0};
  tree.threshold = {0.5f, 1.0f, 2.0f};
  tree.default_left = {1, 0, 1};
  tree.left_child = {1, ~0, ~2};
  tree.right_child = {2, ~1, ~3};
  tree.leaf_value = {1.0, 2.0, 4.0, 8.0};
  tree.leaf_count = {10, 30, 20, 40};
  return tree;
}

TEST(TreeShapTest, HandTreeExpectedValueAndContributions) {
  const Tree tree = HandTree();
  ShapTree shap(tree);
  EXPECT_EQ(shap.depth(), 2);
  EXPECT_EQ(shap.row_width(), 2);
  // Cover-weighted mean of the leaves.
  EXPECT_DOUBLE_EQ(shap.expected_value(),
                   (10 * 1.0 + 30 * 2.0 + 20 * 4.0 + 40 * 8.0) / 100.0);
  const std::vector<std::vector<float>> rows = {
      {0.0f, 0.0f},
      {0.0f, 5.0f},
      {1.0f, 0.0f},
      {3.0f, 0.0f},
      {static_cast<float>(kNaN), 1.0f},
      {3.0f, static_cast<float>(kNaN)}};
  for (const auto& row : rows) {
    const std::vector<double> phi = TreeShapOf(tree, row.data(), 2);
    ExpectNear(phi, BruteForceShap(tree, row.data(), 2), "hand tree");
    EXPECT_NEAR(phi[0] + phi[1] + shap.expected_value(),
                testing::ReferenceTree(tree, 0, row.data()), 1e-12);
  }
  // By hand for x = (0, 0) (leaf 1.0): v({}) = 4.7, v({0}) = 0.25 * 1 +
  // 0.75 * 2 = 1.75, v({1}) = 0.4 * 1 + 0.6 * (1/3 * 4 + 2/3 * 8) = 4.4,
  // v({0, 1}) = 1. phi_0 = ((1.75 - 4.7) + (1 - 4.4)) / 2 = -3.175,
  // phi_1 = ((4.4 - 4.7) + (1 - 1.75)) / 2 = -0.525.
  const std::vector<double> phi = TreeShapOf(tree, rows[0].data(), 2);
  EXPECT_NEAR(phi[0], -3.175, 1e-12);
  EXPECT_NEAR(phi[1], -0.525, 1e-12);
}

TEST(TreeShapTest, SingleLeafTreeIsAllBias) {
  Tree tree;
  tree.leaf_value = {0.75};
  ShapTree shap(tree);
  EXPECT_EQ(shap.depth(), 0);
  EXPECT_DOUBLE_EQ(shap.expected_value(), 0.75);
  const float row[1] = {1.0f};
  EXPECT_EQ(TreeShapOf(tree, row, 1), std::vector<double>({0.0}));
}

TEST(TreeShapTest, MissingCountsSplitEqually) {
  Tree tree = HandTree();
  tree.leaf_count.clear();
  ShapTree shap(tree);
  EXPECT_DOUBLE_EQ(shap.expected_value(),
                   0.5 * (0.5 * 1 + 0.5 * 2) + 0.5 * (0.5 * 4 + 0.5 * 8));
  const float row[2] = {3.0f, 0.0f};
  ExpectNear(TreeShapOf(tree, row, 2), BruteForceShap(tree, row, 2),
             "no counts");
  // Zero counts under one child: that side carries no weight.
  tree = HandTree();
  tree.leaf_count = {0, 0, 20, 40};
  ShapTree skewed(tree);
  EXPECT_DOUBLE_EQ(skewed.expected_value(), (20 * 4.0 + 40 * 8.0) / 60.0);
  for (const float x0 : {0.0f, 1.0f, 3.0f}) {
    const float zero_row[2] = {x0, 0.0f};
    const std::vector<double> phi = TreeShapOf(tree, zero_row, 2);
    ExpectNear(phi, BruteForceShap(tree, zero_row, 2), "zero counts");
    EXPECT_NEAR(phi[0] + phi[1] + skewed.expected_value(),
                testing::ReferenceTree(tree, 0, zero_row), 1e-12);
  }
}

TEST(TreeShapTest, RandomTreesMatchBruteForce) {
  std::mt19937_64 rng(20240613);
  constexpr int32_t kFeatures = 6;
  for (int trial = 0; trial < 300; ++trial) {
    const int32_t leaves = std::uniform_int_distribution<int32_t>(1, 12)(rng);
    Tree tree = RandomTree(rng, leaves, kFeatures);
    if (trial % 5 == 0) tree.leaf_count.clear();
    if (trial % 7 == 0 && tree.num_internal_nodes() > 0) {
      tree.zero_as_missing.assign(tree.num_internal_nodes(), 1);
    }
    if (trial % 11 == 0) {
      for (int32_t& count : tree.leaf_count) {
        if (std::bernoulli_distribution(0.3)(rng)) count = 0;
      }
    }
    const std::vector<float> rows = RandomRows(rng, 4, kFeatures, 0.2);
    ShapTree shap(tree);
    for (size_t d = 0; d < 4; ++d) {
      const float* row = rows.data() + d * kFeatures;
      const std::vector<double> phi = TreeShapOf(tree, row, kFeatures);
      ExpectNear(phi, BruteForceShap(tree, row, kFeatures),
                 "trial " + std::to_string(trial));
      double sum = shap.expected_value();
      for (double value : phi) sum += value;
      EXPECT_NEAR(sum, testing::ReferenceTree(tree, 0, row), 1e-9)
          << "trial " << trial;
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(EnsembleExplainerTest, RandomForestsSumToTheServedScore) {
  std::mt19937_64 rng(7);
  constexpr int32_t kFeatures = 5;
  for (int trial = 0; trial < 20; ++trial) {
    Ensemble model = RandomEnsemble(rng, 8, 10, kFeatures);
    if (trial % 2 == 0) {
      model.linear_weights = {0.5, -1.0, 0.0, 2.0, 0.25};
    }
    absl::StatusOr<EnsembleExplainer> explainer =
        EnsembleExplainer::Create(model);
    ASSERT_TRUE(explainer.ok()) << explainer.status();
    absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
    ASSERT_TRUE(scorer.ok()) << scorer.status();
    double bias = model.base_score[0];
    for (const Tree& tree : model.trees)
      bias += ShapTree(tree).expected_value();
    EXPECT_NEAR(explainer->bias(), bias, 1e-12);

    const size_t kDocs = 6;
    const std::vector<float> rows = RandomRows(rng, kDocs, kFeatures, 0.15);
    std::vector<double> scores(kDocs);
    scorer->Score(rows, kDocs, absl::MakeSpan(scores));
    std::vector<ShapTree::PathElement> scratch;
    for (size_t d = 0; d < kDocs; ++d) {
      const float* row = rows.data() + d * kFeatures;
      std::vector<double> phi(kFeatures, kNaN);
      explainer->Explain(absl::MakeConstSpan(row, kFeatures),
                         absl::MakeSpan(phi), &scratch);
      // Forest = sum of trees: brute force tree by tree, plus w_f x_f.
      std::vector<double> expected(kFeatures, 0.0);
      for (const Tree& tree : model.trees) {
        const std::vector<double> tree_phi =
            BruteForceShap(tree, row, kFeatures);
        for (int32_t f = 0; f < kFeatures; ++f) expected[f] += tree_phi[f];
      }
      for (size_t f = 0; f < model.linear_weights.size(); ++f) {
        if (!std::isnan(row[f]))
          expected[f] += model.linear_weights[f] * row[f];
      }
      ExpectNear(phi, expected, "forest " + std::to_string(trial));
      double sum = explainer->bias();
      for (double value : phi) sum += value;
      EXPECT_NEAR(sum, scores[d], 1e-9 * std::max(1.0, std::fabs(scores[d])));
      EXPECT_NEAR(sum, ReferenceRaw(model, row, 0, model.trees.size()), 1e-9);
    }
  }
}

TEST(EnsembleExplainerTest, CostAndWidth) {
  Ensemble model;
  model.num_features = 10;
  model.base_score = {1.0};
  model.trees = {HandTree(), HandTree()};
  absl::StatusOr<EnsembleExplainer> explainer =
      EnsembleExplainer::Create(model);
  ASSERT_TRUE(explainer.ok()) << explainer.status();
  EXPECT_EQ(explainer->row_width(), 2);  // only features 0 and 1 are split on
  EXPECT_EQ(explainer->max_depth(), 2);
  // Two trees of 4 leaves and depth 2, plus the 2 features read.
  EXPECT_EQ(explainer->cost_per_document(), 2u * 4u * 2u * 2u + 2u);
  model.linear_weights.assign(10, 0.0);
  explainer = EnsembleExplainer::Create(model);
  ASSERT_TRUE(explainer.ok());
  EXPECT_EQ(explainer->row_width(), 10);
}

TEST(EnsembleExplainerTest, RefusesMultiOutputAndInvalidModels) {
  std::mt19937_64 rng(3);
  Ensemble graded = RandomEnsemble(rng, 2, 4, 3, /*num_outputs=*/3);
  absl::StatusOr<EnsembleExplainer> explainer =
      EnsembleExplainer::Create(graded);
  EXPECT_EQ(explainer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(explainer.status().message(), HasSubstr("single-output"));

  Ensemble broken = RandomEnsemble(rng, 2, 4, 3);
  broken.trees[0].leaf_value.push_back(1.0);
  EXPECT_EQ(EnsembleExplainer::Create(broken).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(EnsembleExplainerTest, RefusesTreesDeeperThanTheCap) {
  // A chain: every right child is a leaf.
  const int32_t depth = EnsembleExplainer::kMaxDepth + 1;
  Tree tree;
  for (int32_t n = 0; n < depth; ++n) {
    tree.split_feature.push_back(0);
    tree.threshold.push_back(static_cast<float>(n));
    tree.default_left.push_back(1);
    tree.left_child.push_back(n + 1 < depth ? n + 1 : ~depth);
    tree.right_child.push_back(~n);
  }
  tree.leaf_value.assign(depth + 1, 1.0);
  Ensemble model;
  model.num_features = 1;
  model.trees = {tree};
  absl::StatusOr<EnsembleExplainer> explainer =
      EnsembleExplainer::Create(model);
  EXPECT_EQ(explainer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(explainer.status().message(), HasSubstr("1025 splits deep"));
  // One level less is explained, and still adds up.
  tree.split_feature.pop_back();
  tree.threshold.pop_back();
  tree.default_left.pop_back();
  tree.left_child.pop_back();
  tree.right_child.pop_back();
  tree.left_child.back() = ~(depth - 1);
  tree.leaf_value.pop_back();
  tree.leaf_value.back() = 5.0;
  tree.leaf_count.assign(depth, 1);
  model.trees = {tree};
  explainer = EnsembleExplainer::Create(model);
  ASSERT_TRUE(explainer.ok()) << explainer.status();
  const float row[1] = {-1.0f};  // left at every split: the deepest leaf
  double phi[1];
  std::vector<ShapTree::PathElement> scratch;
  explainer->Explain(absl::MakeConstSpan(row, 1), absl::MakeSpan(phi, 1),
                     &scratch);
  EXPECT_NEAR(explainer->bias() + phi[0], 5.0, 1e-9);
}

}  // namespace
}  // namespace plrank
