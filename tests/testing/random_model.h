#ifndef PLRANK_TESTS_TESTING_RANDOM_MODEL_H_
#define PLRANK_TESTS_TESTING_RANDOM_MODEL_H_

// Random but valid models and rows for model tests, plus a naive reference
// scorer and a field-by-field Ensemble comparison.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "core/model/ensemble.h"
#include "gtest/gtest.h"

namespace plrank::testing {

// Thresholds and feature values are drawn from this grid so that values hit
// thresholds exactly (the `<=` boundary) often.
inline float GridValue(std::mt19937_64& rng) {
  return static_cast<float>(std::uniform_int_distribution<int>(-8, 8)(rng)) *
         0.25f;
}

// A random binary tree with `num_leaves` leaves whose internal nodes (except
// the root, which must be node 0) and leaves are numbered in shuffled order.
inline Tree RandomTree(std::mt19937_64& rng, int32_t num_leaves,
                       int32_t num_features) {
  Tree tree;
  if (num_leaves <= 1) {
    tree.leaf_value = {std::normal_distribution<double>()(rng)};
    tree.leaf_count = {7};
    return tree;
  }
  // Grow: split a random open leaf until there are num_leaves leaves. Each
  // logical node remembers its children as logical ids; leaves are open slots.
  struct Logical {
    int32_t left = -1, right = -1;  // logical ids, -1 = leaf
  };
  std::vector<Logical> logical(1);
  std::vector<int32_t> open_leaves = {0};
  while (static_cast<int32_t>(open_leaves.size()) < num_leaves) {
    const size_t pick =
        std::uniform_int_distribution<size_t>(0, open_leaves.size() - 1)(rng);
    const int32_t id = open_leaves[pick];
    const int32_t left = static_cast<int32_t>(logical.size());
    logical.emplace_back();
    logical.emplace_back();
    logical[id].left = left;
    logical[id].right = left + 1;
    open_leaves[pick] = left;
    open_leaves.push_back(left + 1);
  }
  std::vector<int32_t> internal_ids, leaf_ids;
  for (int32_t id = 0; id < static_cast<int32_t>(logical.size()); ++id) {
    (logical[id].left >= 0 ? internal_ids : leaf_ids).push_back(id);
  }
  std::shuffle(internal_ids.begin() + 1, internal_ids.end(), rng);
  std::shuffle(leaf_ids.begin(), leaf_ids.end(), rng);
  std::vector<int32_t> index_of(logical.size());
  for (size_t i = 0; i < internal_ids.size(); ++i) {
    index_of[internal_ids[i]] = static_cast<int32_t>(i);
  }
  for (size_t l = 0; l < leaf_ids.size(); ++l) {
    index_of[leaf_ids[l]] = ~static_cast<int32_t>(l);
  }
  const size_t num_internal = internal_ids.size();
  tree.split_feature.resize(num_internal);
  tree.threshold.resize(num_internal);
  tree.default_left.resize(num_internal);
  tree.left_child.resize(num_internal);
  tree.right_child.resize(num_internal);
  tree.split_gain.resize(num_internal);
  for (size_t i = 0; i < num_internal; ++i) {
    const Logical& node = logical[internal_ids[i]];
    tree.split_feature[i] =
        std::uniform_int_distribution<int32_t>(0, num_features - 1)(rng);
    tree.threshold[i] = GridValue(rng);
    tree.default_left[i] = std::uniform_int_distribution<int>(0, 1)(rng);
    tree.left_child[i] = index_of[node.left];
    tree.right_child[i] = index_of[node.right];
    tree.split_gain[i] = std::uniform_real_distribution<double>(0, 10)(rng);
  }
  tree.leaf_value.resize(leaf_ids.size());
  tree.leaf_count.resize(leaf_ids.size());
  for (size_t l = 0; l < leaf_ids.size(); ++l) {
    tree.leaf_value[l] = std::normal_distribution<double>(0, 0.3)(rng);
    tree.leaf_count[l] = std::uniform_int_distribution<int32_t>(1, 100)(rng);
  }
  return tree;
}

inline Ensemble RandomEnsemble(std::mt19937_64& rng, int32_t num_iterations,
                               int32_t max_leaves, int32_t num_features,
                               int32_t num_outputs = 1) {
  Ensemble model;
  model.num_features = num_features;
  model.objective = "plrank";
  model.num_outputs = num_outputs;
  model.transform = num_outputs == 1 ? ScoreTransform::kIdentity
                                     : ScoreTransform::kExpectedRelevance;
  for (int32_t k = 0; k < num_outputs; ++k) {
    model.base_score.push_back(std::normal_distribution<double>()(rng));
  }
  for (int32_t t = 0; t < num_iterations * num_outputs; ++t) {
    const int32_t leaves =
        std::uniform_int_distribution<int32_t>(1, max_leaves)(rng);
    model.trees.push_back(RandomTree(rng, leaves, num_features));
  }
  for (int32_t f = 0; f < num_features; ++f) {
    model.feature_names.push_back("feature_" + std::to_string(f));
  }
  model.parameters = {{"learning_rate", "0.1"}, {"num_leaves", "31"}};
  for (int32_t i = 1; i <= num_iterations; ++i) {
    IterationMetrics metrics;
    metrics.iteration = i;
    metrics.train_loss = 1.0 / i;
    metrics.train["ndcg@10"] = 0.5 + 0.001 * i;
    metrics.valid["ndcg@10"] = 0.4 + 0.001 * i;
    model.history.push_back(metrics);
  }
  model.best_iteration = num_iterations / 2;
  model.train_data_hash = "0123abcd";
  model.valid_data_hash = "4567ef01";
  model.created_unix_seconds = 1700000000;
  return model;
}

// Row-major rows with about `nan_fraction` NaNs.
inline std::vector<float> RandomRows(std::mt19937_64& rng, size_t num_docs,
                                     int32_t num_features,
                                     double nan_fraction = 0.1) {
  std::vector<float> rows(num_docs * num_features);
  std::bernoulli_distribution is_nan(nan_fraction);
  for (float& value : rows) {
    value = is_nan(rng) ? std::numeric_limits<float>::quiet_NaN()
                        : GridValue(rng);
  }
  return rows;
}

// Sets zero_as_missing on about `fraction` of every tree's internal nodes
// (after generation, so the trees' other fields stay as the seed made them).
inline void AddZeroAsMissing(std::mt19937_64& rng, double fraction,
                             Ensemble* model) {
  std::bernoulli_distribution flag(fraction);
  for (Tree& tree : model->trees) {
    if (tree.num_internal_nodes() == 0) continue;
    tree.zero_as_missing.resize(tree.num_internal_nodes());
    for (uint8_t& zero : tree.zero_as_missing) zero = flag(rng);
  }
}

// Rows like RandomRows, but a third of the values sit at or next to zero
// (+-0, +-kZeroAsMissingBound and their float neighbours, denormals,
// +-1e-36), where zero-as-missing splits and plain splits disagree.
inline std::vector<float> RowsNearZero(std::mt19937_64& rng, size_t num_docs,
                                       int32_t num_features,
                                       double nan_fraction = 0.1) {
  constexpr float kBound = kZeroAsMissingBound;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float near_zero[] = {0.0f,
                             -0.0f,
                             kBound,
                             -kBound,
                             std::nextafter(kBound, kInf),
                             -std::nextafter(kBound, kInf),
                             std::nextafter(kBound, 0.0f),
                             -std::nextafter(kBound, 0.0f),
                             std::numeric_limits<float>::denorm_min(),
                             -std::numeric_limits<float>::denorm_min(),
                             1e-36f,
                             -1e-36f};
  std::vector<float> rows = RandomRows(rng, num_docs, num_features, nan_fraction);
  std::uniform_int_distribution<size_t> pick(0, std::size(near_zero) - 1);
  std::bernoulli_distribution replace(1.0 / 3);
  for (float& value : rows) {
    if (!std::isnan(value) && replace(rng)) value = near_zero[pick(rng)];
  }
  return rows;
}

// RowsNearZero with 15% NaN, then 3% of the values replaced by +-infinity:
// the scorer tests' rows (values on the threshold grid, at zero, missing
// and infinite).
inline std::vector<float> RowsNearZeroWithInfinities(std::mt19937_64& rng,
                                                     size_t num_docs,
                                                     int32_t num_features) {
  std::vector<float> rows = RowsNearZero(rng, num_docs, num_features, 0.15);
  std::bernoulli_distribution infinite(0.03);
  std::bernoulli_distribution negative(0.5);
  for (float& value : rows) {
    if (infinite(rng)) {
      value = negative(rng) ? -std::numeric_limits<float>::infinity()
                            : std::numeric_limits<float>::infinity();
    }
  }
  return rows;
}

// Recursive traversal straight from the Ensemble, as the format defines it.
inline double ReferenceTree(const Tree& tree, int32_t node, const float* row) {
  if (tree.num_internal_nodes() == 0) return tree.leaf_value[0];
  const float value = row[tree.split_feature[node]];
  const bool missing =
      std::isnan(value) || (tree.treats_zero_as_missing(node) &&
                            -kZeroAsMissingBound <= value &&
                            value <= kZeroAsMissingBound);
  const bool left = missing ? tree.default_left[node] != 0
                            : value <= tree.threshold[node];
  const int32_t child = left ? tree.left_child[node] : tree.right_child[node];
  return child < 0 ? tree.leaf_value[~child] : ReferenceTree(tree, child, row);
}

// Raw output k of one row using the first `num_trees` trees.
inline double ReferenceRaw(const Ensemble& model, const float* row, int32_t k,
                           size_t num_trees) {
  double sum = model.base_score.empty() ? 0.0 : model.base_score[k];
  for (size_t t = k; t < num_trees; t += model.num_outputs) {
    sum += ReferenceTree(model.trees[t], 0, row);
  }
  if (!model.linear_weights.empty()) {
    double linear = 0.0;
    for (int32_t f = 0; f < model.num_features; ++f) {
      if (!std::isnan(row[f])) linear += model.linear_weights[f] * row[f];
    }
    sum += linear;
  }
  return sum;
}

inline void ExpectSameEnsemble(const Ensemble& a, const Ensemble& b) {
  EXPECT_EQ(a.num_features, b.num_features);
  EXPECT_EQ(a.feature_names, b.feature_names);
  EXPECT_EQ(a.objective, b.objective);
  EXPECT_EQ(a.num_outputs, b.num_outputs);
  EXPECT_EQ(a.transform, b.transform);
  EXPECT_EQ(a.base_score, b.base_score);
  ASSERT_EQ(a.trees.size(), b.trees.size());
  for (size_t t = 0; t < a.trees.size(); ++t) {
    const Tree& x = a.trees[t];
    const Tree& y = b.trees[t];
    EXPECT_EQ(x.split_feature, y.split_feature) << "tree " << t;
    EXPECT_EQ(x.threshold, y.threshold) << "tree " << t;
    EXPECT_EQ(x.default_left, y.default_left) << "tree " << t;
    EXPECT_EQ(x.zero_as_missing, y.zero_as_missing) << "tree " << t;
    EXPECT_EQ(x.left_child, y.left_child) << "tree " << t;
    EXPECT_EQ(x.right_child, y.right_child) << "tree " << t;
    EXPECT_EQ(x.split_gain, y.split_gain) << "tree " << t;
    EXPECT_EQ(x.leaf_value, y.leaf_value) << "tree " << t;
    EXPECT_EQ(x.leaf_count, y.leaf_count) << "tree " << t;
  }
  EXPECT_EQ(a.linear_weights, b.linear_weights);
  EXPECT_EQ(a.parameters, b.parameters);
  ASSERT_EQ(a.history.size(), b.history.size());
  for (size_t i = 0; i < a.history.size(); ++i) {
    EXPECT_EQ(a.history[i].iteration, b.history[i].iteration);
    EXPECT_EQ(a.history[i].train_loss, b.history[i].train_loss);
    EXPECT_EQ(a.history[i].train, b.history[i].train);
    EXPECT_EQ(a.history[i].valid, b.history[i].valid);
  }
  EXPECT_EQ(a.best_iteration, b.best_iteration);
  EXPECT_EQ(a.train_data_hash, b.train_data_hash);
  EXPECT_EQ(a.valid_data_hash, b.valid_data_hash);
  EXPECT_EQ(a.created_unix_seconds, b.created_unix_seconds);
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_RANDOM_MODEL_H_
