// ValidateEnsemble: the structural checks every model passes before it is
// written, after it is read, and before it is flattened for scoring.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "core/data/utf8.h"
#include "core/model/ensemble.h"
#include "core/model/model_io.h"

namespace plrank {
namespace {

// Node indices are int32 and leaves are encoded as ~index, so both counts
// must stay well inside int32.
constexpr int64_t kMaxNodesPerTree = int64_t{1} << 30;

absl::Status TreeError(size_t tree, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrFormat("tree %d: %s", tree, what));
}

absl::Status NodeError(size_t tree, int32_t node, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("tree %d node %d: %s", tree, node, what));
}

absl::Status ValidateTree(const Tree& tree, size_t t, int32_t num_features) {
  const size_t num_internal = tree.split_feature.size();
  const size_t num_leaves = tree.leaf_value.size();
  if (static_cast<int64_t>(num_internal) >= kMaxNodesPerTree) {
    return TreeError(t, absl::StrFormat("%d internal nodes is too many",
                                        num_internal));
  }
  if (tree.threshold.size() != num_internal ||
      tree.default_left.size() != num_internal ||
      tree.left_child.size() != num_internal ||
      tree.right_child.size() != num_internal) {
    return TreeError(
        t, absl::StrFormat("node arrays disagree in length: split_feature %d, "
                           "threshold %d, default_left %d, left_child %d, "
                           "right_child %d",
                           num_internal, tree.threshold.size(),
                           tree.default_left.size(), tree.left_child.size(),
                           tree.right_child.size()));
  }
  if (!tree.zero_as_missing.empty() &&
      tree.zero_as_missing.size() != num_internal) {
    return TreeError(t, absl::StrFormat(
                            "%d zero_as_missing flags for %d internal nodes",
                            tree.zero_as_missing.size(), num_internal));
  }
  if (!tree.split_gain.empty() && tree.split_gain.size() != num_internal) {
    return TreeError(t, absl::StrFormat("%d split gains for %d internal nodes",
                                        tree.split_gain.size(), num_internal));
  }
  if (num_leaves != num_internal + 1) {
    return TreeError(t, absl::StrFormat("%d leaves for %d internal nodes "
                                        "(a binary tree has one more leaf)",
                                        num_leaves, num_internal));
  }
  if (!tree.leaf_count.empty() && tree.leaf_count.size() != num_leaves) {
    return TreeError(t, absl::StrFormat("%d leaf counts for %d leaves",
                                        tree.leaf_count.size(), num_leaves));
  }
  if (!tree.leaf_cover.empty() && tree.leaf_cover.size() != num_leaves) {
    return TreeError(t, absl::StrFormat("%d leaf covers for %d leaves",
                                        tree.leaf_cover.size(), num_leaves));
  }
  for (size_t l = 0; l < num_leaves; ++l) {
    if (!std::isfinite(tree.leaf_value[l])) {
      return TreeError(t, absl::StrFormat("leaf %d: value %f is not finite", l,
                                          tree.leaf_value[l]));
    }
    if (!tree.leaf_count.empty() && tree.leaf_count[l] < 0) {
      return TreeError(t, absl::StrFormat("leaf %d: negative count %d", l,
                                          tree.leaf_count[l]));
    }
    // Covers add up along paths: a finite sum of finite leaves is what
    // TreeSHAP divides by.
    if (!tree.leaf_cover.empty() &&
        !(tree.leaf_cover[l] >= 0 && tree.leaf_cover[l] <= kMaxLeafCover)) {
      return TreeError(t,
                       absl::StrFormat("leaf %d: cover %g is not in [0, %g]", l,
                                       tree.leaf_cover[l], kMaxLeafCover));
    }
  }
  for (size_t n = 0; n < num_internal; ++n) {
    const int32_t node = static_cast<int32_t>(n);
    if (tree.split_feature[n] < 0 || tree.split_feature[n] >= num_features) {
      return NodeError(t, node,
                       absl::StrFormat("split feature %d outside [0, %d)",
                                       tree.split_feature[n], num_features));
    }
    if (!std::isfinite(tree.threshold[n])) {
      return NodeError(t, node, absl::StrFormat("threshold %f is not finite",
                                                tree.threshold[n]));
    }
    if (tree.default_left[n] > 1) {
      return NodeError(t, node, absl::StrFormat("default_left %d is not 0 or 1",
                                                tree.default_left[n]));
    }
    if (!tree.zero_as_missing.empty() && tree.zero_as_missing[n] > 1) {
      return NodeError(t, node,
                       absl::StrFormat("zero_as_missing %d is not 0 or 1",
                                       tree.zero_as_missing[n]));
    }
  }
  if (num_internal == 0) return absl::OkStatus();

  // Walk from the root: every internal node and every leaf must be reached
  // exactly once, which rules out cycles, shared subtrees and orphans.
  std::vector<uint8_t> node_seen(num_internal, 0);
  std::vector<uint8_t> leaf_seen(num_leaves, 0);
  std::vector<int32_t> stack = {0};
  node_seen[0] = 1;
  size_t nodes_reached = 1;
  size_t leaves_reached = 0;
  while (!stack.empty()) {
    const int32_t node = stack.back();
    stack.pop_back();
    for (int side = 0; side < 2; ++side) {
      const int32_t child =
          side == 0 ? tree.left_child[node] : tree.right_child[node];
      const char* name = side == 0 ? "left" : "right";
      if (child >= 0) {
        if (static_cast<size_t>(child) >= num_internal) {
          return NodeError(t, node,
                           absl::StrFormat("%s child %d outside [0, %d)", name,
                                           child, num_internal));
        }
        if (node_seen[child]) {
          return NodeError(
              t, node,
              absl::StrFormat("%s child %d is reached twice (cycle or shared "
                              "subtree)",
                              name, child));
        }
        node_seen[child] = 1;
        ++nodes_reached;
        stack.push_back(child);
      } else {
        const int32_t leaf = ~child;
        if (static_cast<size_t>(leaf) >= num_leaves) {
          return NodeError(t, node,
                           absl::StrFormat("%s child is leaf %d outside [0, %d)",
                                           name, leaf, num_leaves));
        }
        if (leaf_seen[leaf]) {
          return NodeError(t, node,
                           absl::StrFormat("%s child leaf %d is referenced "
                                           "twice",
                                           name, leaf));
        }
        leaf_seen[leaf] = 1;
        ++leaves_reached;
      }
    }
  }
  if (nodes_reached != num_internal) {
    for (size_t n = 0; n < num_internal; ++n) {
      if (!node_seen[n]) {
        return NodeError(t, static_cast<int32_t>(n),
                         "not reachable from the root");
      }
    }
  }
  if (leaves_reached != num_leaves) {
    for (size_t l = 0; l < num_leaves; ++l) {
      if (!leaf_seen[l]) {
        return TreeError(t, absl::StrFormat("leaf %d is not reachable", l));
      }
    }
  }
  return absl::OkStatus();
}

// Every text of the model is UTF-8, as the artifact's string fields must be.
absl::Status ValidateTexts(const Ensemble& model) {
  auto refuse = [](const std::string& what, absl::string_view text) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s \"%s\" is not valid UTF-8 (model files store text as UTF-8)", what,
        absl::CHexEscape(text)));
  };
  for (size_t f = 0; f < model.feature_names.size(); ++f) {
    if (!IsValidUtf8(model.feature_names[f])) {
      return refuse(absl::StrFormat("feature name %d", f),
                    model.feature_names[f]);
    }
  }
  if (!IsValidUtf8(model.objective))
    return refuse("objective", model.objective);
  for (const auto& [name, value] : model.parameters) {
    if (!IsValidUtf8(name)) return refuse("parameter name", name);
    if (!IsValidUtf8(value)) {
      return refuse(absl::StrFormat("value of parameter %s", name), value);
    }
  }
  for (const IterationMetrics& metrics : model.history) {
    for (const auto* metric_map : {&metrics.train, &metrics.valid}) {
      for (const auto& [name, value] : *metric_map) {
        if (!IsValidUtf8(name)) return refuse("metric name", name);
      }
    }
  }
  if (!IsValidUtf8(model.train_data_hash)) {
    return refuse("training data hash", model.train_data_hash);
  }
  if (!IsValidUtf8(model.valid_data_hash)) {
    return refuse("validation data hash", model.valid_data_hash);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateEnsemble(const Ensemble& model) {
  if (model.num_features < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("negative num_features %d", model.num_features));
  }
  if (model.num_features > kMaxModelFeatures) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "num_features %d is above the limit of %d features per model",
        model.num_features, kMaxModelFeatures));
  }
  if (!model.feature_names.empty() &&
      model.feature_names.size() != static_cast<size_t>(model.num_features)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%d feature names for %d features",
                        model.feature_names.size(), model.num_features));
  }
  if (absl::Status status = ValidateTexts(model); !status.ok()) return status;
  if (model.num_outputs < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("num_outputs %d < 1", model.num_outputs));
  }
  switch (model.transform) {
    case ScoreTransform::kIdentity:
      if (model.num_outputs != 1) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "identity transform needs exactly 1 output, model has %d",
            model.num_outputs));
      }
      break;
    case ScoreTransform::kExpectedRelevance:
      if (model.num_outputs < 2) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "expected-relevance transform needs >= 2 outputs, model has %d",
            model.num_outputs));
      }
      break;
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "unknown score transform %d", static_cast<int>(model.transform)));
  }
  if (!model.base_score.empty() &&
      model.base_score.size() != static_cast<size_t>(model.num_outputs)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%d base scores for %d outputs",
                        model.base_score.size(), model.num_outputs));
  }
  for (size_t k = 0; k < model.base_score.size(); ++k) {
    if (!std::isfinite(model.base_score[k])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "base score %d is not finite (%f)", k, model.base_score[k]));
    }
  }
  if (model.trees.size() % model.num_outputs != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d trees is not a multiple of num_outputs %d (whole iterations)",
        model.trees.size(), model.num_outputs));
  }
  if (!model.linear_weights.empty()) {
    if (model.num_outputs != 1) {
      return absl::InvalidArgumentError(
          "linear weights are only supported with a single output");
    }
    if (model.linear_weights.size() !=
        static_cast<size_t>(model.num_features)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%d linear weights for %d features",
                          model.linear_weights.size(), model.num_features));
    }
    for (size_t f = 0; f < model.linear_weights.size(); ++f) {
      if (!std::isfinite(model.linear_weights[f])) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "linear weight %d is not finite (%f)", f, model.linear_weights[f]));
      }
    }
  }
  if (model.trees.empty() && model.linear_weights.empty()) {
    return absl::InvalidArgumentError("model has neither trees nor linear weights");
  }
  const int64_t num_iterations =
      static_cast<int64_t>(model.trees.size()) / model.num_outputs;
  if (model.best_iteration < 0 || model.best_iteration > num_iterations) {
    return absl::InvalidArgumentError(
        absl::StrFormat("best_iteration %d outside [0, %d]",
                        model.best_iteration, num_iterations));
  }
  int64_t total_nodes = 0;
  for (size_t t = 0; t < model.trees.size(); ++t) {
    if (absl::Status status = ValidateTree(model.trees[t], t, model.num_features);
        !status.ok()) {
      return status;
    }
    total_nodes += model.trees[t].num_internal_nodes() +
                   model.trees[t].num_leaves();
  }
  // Every leaf is finite, but a path through all trees could still add up to
  // +-inf: bound each output's score by its base plus each tree's largest
  // |leaf| and refuse a model whose bound is not finite.
  for (int32_t k = 0; k < model.num_outputs; ++k) {
    double bound = model.base_score.empty() ? 0.0 : std::fabs(model.base_score[k]);
    for (size_t t = k; t < model.trees.size(); t += model.num_outputs) {
      double largest = 0.0;
      for (double value : model.trees[t].leaf_value) {
        largest = std::max(largest, std::fabs(value));
      }
      bound += largest;
    }
    if (!std::isfinite(bound)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "output %d: the leaf values of its trees can add up to an infinite "
          "score",
          k));
    }
  }
  // The flattened scorer addresses all nodes with int32 indices.
  if (total_nodes >= int64_t{std::numeric_limits<int32_t>::max()} / 2) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%d nodes in total is too many", total_nodes));
  }
  return absl::OkStatus();
}

}  // namespace plrank
