#include "core/explain/tree_shap.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace plrank {
namespace {

using PathElement = ShapTree::PathElement;

// EXTEND: adds a feature with the given zero/one fractions to the path of
// `unique_depth` elements and updates the permutation weights.
void ExtendPath(PathElement* path, int unique_depth, double zero_fraction,
                double one_fraction, int32_t feature) {
  path[unique_depth] = {feature, zero_fraction, one_fraction,
                        unique_depth == 0 ? 1.0 : 0.0};
  const double denominator = unique_depth + 1;
  for (int i = unique_depth - 1; i >= 0; --i) {
    path[i + 1].weight += one_fraction * path[i].weight * (i + 1) / denominator;
    path[i].weight =
        zero_fraction * path[i].weight * (unique_depth - i) / denominator;
  }
}

// UNWIND: removes element `path_index` from a path of unique_depth + 1
// elements, undoing its EXTEND.
void UnwindPath(PathElement* path, int unique_depth, int path_index) {
  const double one_fraction = path[path_index].one_fraction;
  const double zero_fraction = path[path_index].zero_fraction;
  const double denominator = unique_depth + 1;
  double next_one_portion = path[unique_depth].weight;
  for (int i = unique_depth - 1; i >= 0; --i) {
    if (one_fraction != 0) {
      const double previous = path[i].weight;
      path[i].weight =
          next_one_portion * denominator / ((i + 1) * one_fraction);
      next_one_portion = previous - path[i].weight * zero_fraction *
                                        (unique_depth - i) / denominator;
    } else {
      path[i].weight =
          path[i].weight * denominator / (zero_fraction * (unique_depth - i));
    }
  }
  for (int i = path_index; i < unique_depth; ++i) {
    path[i].feature = path[i + 1].feature;
    path[i].zero_fraction = path[i + 1].zero_fraction;
    path[i].one_fraction = path[i + 1].one_fraction;
  }
}

// The total permutation weight the path would have with element
// `path_index` unwound, without modifying it.
double UnwoundPathSum(const PathElement* path, int unique_depth,
                      int path_index) {
  const double one_fraction = path[path_index].one_fraction;
  const double zero_fraction = path[path_index].zero_fraction;
  const double denominator = unique_depth + 1;
  double next_one_portion = path[unique_depth].weight;
  double total = 0.0;
  for (int i = unique_depth - 1; i >= 0; --i) {
    if (one_fraction != 0) {
      const double weight =
          next_one_portion * denominator / ((i + 1) * one_fraction);
      total += weight;
      next_one_portion = path[i].weight - weight * zero_fraction *
                                              (unique_depth - i) / denominator;
    } else if (zero_fraction != 0) {
      total +=
          path[i].weight * denominator / (zero_fraction * (unique_depth - i));
    }
  }
  return total;
}

}  // namespace

ShapTree::ShapTree(const Tree& tree)
    : split_feature_(tree.split_feature),
      threshold_(tree.threshold),
      default_left_(tree.default_left),
      zero_as_missing_(tree.zero_as_missing),
      left_child_(tree.left_child),
      right_child_(tree.right_child),
      left_fraction_(tree.split_feature.size(), 0.5),
      leaf_value_(tree.leaf_value) {
  const size_t num_internal = split_feature_.size();
  if (num_internal == 0) {
    expected_value_ = leaf_value_.empty() ? 0.0 : leaf_value_[0];
    return;
  }
  for (int32_t feature : split_feature_) {
    row_width_ = std::max(row_width_, feature + 1);
  }
  // Pre-order from the root (validated: a tree, so each node once), then
  // covers bottom-up in reverse pre-order.
  auto leaf_cover = [&tree](int32_t leaf) -> double {
    if (!tree.leaf_cover.empty()) return tree.leaf_cover[leaf];
    return tree.leaf_count.empty() ? 0.0 : tree.leaf_count[leaf];
  };
  std::vector<int32_t> order;
  std::vector<int32_t> node_depth(num_internal, 0);
  order.reserve(num_internal);
  std::vector<int32_t> stack = {0};
  while (!stack.empty()) {
    const int32_t node = stack.back();
    stack.pop_back();
    order.push_back(node);
    for (int32_t child : {left_child_[node], right_child_[node]}) {
      if (child >= 0) {
        node_depth[child] = node_depth[node] + 1;
        stack.push_back(child);
      } else {
        depth_ = std::max(depth_, node_depth[node] + 1);
      }
    }
  }
  std::vector<double> cover(num_internal, 0.0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int32_t node = *it;
    const int32_t left = left_child_[node];
    const int32_t right = right_child_[node];
    const double left_cover = left >= 0 ? cover[left] : leaf_cover(~left);
    const double right_cover = right >= 0 ? cover[right] : leaf_cover(~right);
    cover[node] = left_cover + right_cover;
    if (cover[node] > 0) left_fraction_[node] = left_cover / cover[node];
  }
  // Expected value: leaf values times their path probabilities.
  std::vector<double> probability(num_internal, 0.0);
  probability[0] = 1.0;
  for (int32_t node : order) {
    const double shares[2] = {left_fraction_[node], 1.0 - left_fraction_[node]};
    const int32_t children[2] = {left_child_[node], right_child_[node]};
    for (int side = 0; side < 2; ++side) {
      const double p = probability[node] * shares[side];
      if (children[side] >= 0) {
        probability[children[side]] = p;
      } else {
        expected_value_ += p * leaf_value_[~children[side]];
      }
    }
  }
}

bool ShapTree::GoesLeft(int32_t node, float value) const {
  const bool missing =
      std::isnan(value) ||
      (!zero_as_missing_.empty() && zero_as_missing_[node] != 0 &&
       -kZeroAsMissingBound <= value && value <= kZeroAsMissingBound);
  return missing ? default_left_[node] != 0 : value <= threshold_[node];
}

void ShapTree::AddContributions(absl::Span<const float> row,
                                absl::Span<double> phi,
                                std::vector<PathElement>* scratch) const {
  if (split_feature_.empty()) return;  // a constant: all in the expected value
  if (scratch->size() < scratch_size()) scratch->resize(scratch_size());
  Recurse(0, row.data(), phi.data(), 0, scratch->data(), 1.0, 1.0, -1);
}

// TREESHAP's RECURSE. `child` is the node to visit (Tree encoding); the
// parent's path (unique_depth elements) is copied behind it and extended
// by the split that led here.
void ShapTree::Recurse(int32_t child, const float* row, double* phi,
                       int unique_depth, PathElement* parent_path,
                       double parent_zero_fraction, double parent_one_fraction,
                       int32_t parent_feature) const {
  PathElement* path = parent_path + unique_depth + 1;
  std::copy(parent_path, parent_path + unique_depth + 1, path);
  ExtendPath(path, unique_depth, parent_zero_fraction, parent_one_fraction,
             parent_feature);
  if (child < 0) {
    const double value = leaf_value_[~child];
    for (int i = 1; i <= unique_depth; ++i) {
      const double weight = UnwoundPathSum(path, unique_depth, i);
      const PathElement& element = path[i];
      phi[element.feature] +=
          weight * (element.one_fraction - element.zero_fraction) * value;
    }
    return;
  }
  const int32_t node = child;
  const int32_t feature = split_feature_[node];
  const bool left_is_hot = GoesLeft(node, row[feature]);
  const int32_t hot = left_is_hot ? left_child_[node] : right_child_[node];
  const int32_t cold = left_is_hot ? right_child_[node] : left_child_[node];
  const double hot_fraction =
      left_is_hot ? left_fraction_[node] : 1.0 - left_fraction_[node];
  const double cold_fraction = 1.0 - hot_fraction;

  // A feature split on again further up is unwound and re-added with the
  // product of its fractions.
  double incoming_zero = 1.0;
  double incoming_one = 1.0;
  int path_index = 0;
  while (path_index <= unique_depth && path[path_index].feature != feature) {
    ++path_index;
  }
  if (path_index <= unique_depth) {
    incoming_zero = path[path_index].zero_fraction;
    incoming_one = path[path_index].one_fraction;
    UnwindPath(path, unique_depth, path_index);
    --unique_depth;
  }
  // A child both of whose fractions are 0 carries no weight: every value
  // its leaves could add is 0 (and unwinding such an element would divide
  // by zero), so it is skipped.
  if (hot_fraction * incoming_zero != 0 || incoming_one != 0) {
    Recurse(hot, row, phi, unique_depth + 1, path, hot_fraction * incoming_zero,
            incoming_one, feature);
  }
  if (cold_fraction * incoming_zero != 0) {
    Recurse(cold, row, phi, unique_depth + 1, path,
            cold_fraction * incoming_zero, 0.0, feature);
  }
}

}  // namespace plrank
