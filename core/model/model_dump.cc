// DumpModel: a human-readable rendering of a model (`--dump`).

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "core/model/ensemble.h"
#include "core/model/model_io.h"

namespace plrank {
namespace {

// History lines beyond this are thinned to about this many.
constexpr size_t kMaxHistoryLines = 20;

// Features are numbered from 1, as in LETOR files, in every output
// (docs/lightgbm-habits.md "Feature numbering"): "feature 39[bm25]".
std::string FeatureName(const Ensemble& model, int32_t feature) {
  if (feature >= 0 && static_cast<size_t>(feature) < model.feature_names.size() &&
      !model.feature_names[feature].empty()) {
    return absl::StrFormat("feature %d[%s]", int64_t{feature} + 1,
                           model.feature_names[feature]);
  }
  return absl::StrFormat("feature %d", int64_t{feature} + 1);
}

std::string MetricsText(const std::map<std::string, double>& metrics) {
  return absl::StrJoin(metrics, " ", [](std::string* out, const auto& entry) {
    absl::StrAppendFormat(out, "%s=%.6g", entry.first, entry.second);
  });
}

void AppendHistory(const Ensemble& model, std::string* out) {
  absl::StrAppendFormat(out, "history: %d iterations, best iteration %d\n",
                        model.history.size(), model.best_iteration);
  const size_t n = model.history.size();
  const size_t stride = n <= kMaxHistoryLines ? 1 : (n + kMaxHistoryLines - 1) /
                                                        kMaxHistoryLines;
  for (size_t i = 0; i < n; ++i) {
    const IterationMetrics& m = model.history[i];
    const bool keep = i % stride == 0 || i + 1 == n ||
                      m.iteration == model.best_iteration;
    if (!keep) continue;
    absl::StrAppendFormat(out, "  iter %5d  loss=%.6g", m.iteration,
                          m.train_loss);
    if (!m.train.empty()) absl::StrAppend(out, "  train: ", MetricsText(m.train));
    if (!m.valid.empty()) absl::StrAppend(out, "  valid: ", MetricsText(m.valid));
    absl::StrAppend(out, "\n");
  }
}

std::string LeafText(const Tree& tree, int32_t leaf) {
  if (leaf < 0 || leaf >= tree.num_leaves()) {
    return absl::StrFormat("<bad leaf %d>", leaf);
  }
  std::string text = absl::StrFormat("leaf %d: %.9g", leaf, tree.leaf_value[leaf]);
  if (static_cast<size_t>(leaf) < tree.leaf_count.size()) {
    absl::StrAppendFormat(&text, " (n=%d)", tree.leaf_count[leaf]);
  }
  if (static_cast<size_t>(leaf) < tree.leaf_cover.size()) {
    absl::StrAppendFormat(&text, " (cover=%.9g)", tree.leaf_cover[leaf]);
  }
  return text;
}

// Renders the tree as nested if/else. An explicit stack rather than recursion
// because validated trees may still be arbitrarily deep chains. Invalid trees
// (dumped while debugging) are rendered up to a bound instead of looping.
void AppendTree(const Ensemble& model, size_t t, std::string* out) {
  const Tree& tree = model.trees[t];
  absl::StrAppendFormat(out, "tree %d (iteration %d, output %d): %d splits, %d "
                        "leaves\n",
                        t, t / model.num_outputs + 1, t % model.num_outputs,
                        tree.num_internal_nodes(), tree.num_leaves());
  if (tree.num_internal_nodes() == 0) {
    if (tree.num_leaves() > 0) absl::StrAppend(out, "  ", LeafText(tree, 0), "\n");
    return;
  }
  // (child, depth, header): header is "else" for right children.
  struct Item {
    int32_t child;
    int depth;
    bool is_else;
  };
  std::vector<Item> stack = {{0, 1, false}};
  size_t budget = 2 * static_cast<size_t>(tree.num_internal_nodes()) + 1;
  while (!stack.empty()) {
    if (budget-- == 0) {
      absl::StrAppend(out, "  <tree is not a valid binary tree; truncated>\n");
      return;
    }
    const Item item = stack.back();
    stack.pop_back();
    const std::string indent(2 * item.depth, ' ');
    if (item.is_else) absl::StrAppend(out, std::string(2 * (item.depth - 1), ' '), "else\n");
    if (item.child < 0) {
      absl::StrAppend(out, indent, LeafText(tree, ~item.child), "\n");
      continue;
    }
    const int32_t n = item.child;
    if (n >= tree.num_internal_nodes()) {
      absl::StrAppend(out, indent, "<bad node ", n, ">\n");
      continue;
    }
    absl::StrAppendFormat(out, "%sif %s <= %.9g (node %d, missing%s -> %s",
                          indent, FeatureName(model, tree.split_feature[n]),
                          tree.threshold[n], n,
                          static_cast<size_t>(n) < tree.zero_as_missing.size() &&
                                  tree.zero_as_missing[n]
                              ? " or zero"
                              : "",
                          tree.default_left[n] ? "left" : "right");
    if (static_cast<size_t>(n) < tree.split_gain.size()) {
      absl::StrAppendFormat(out, ", gain %.6g", tree.split_gain[n]);
    }
    absl::StrAppend(out, ")\n");
    stack.push_back({tree.right_child[n], item.depth + 1, true});
    stack.push_back({tree.left_child[n], item.depth + 1, false});
  }
}

}  // namespace

std::string DumpModel(const Ensemble& model) {
  std::string out;
  absl::StrAppendFormat(&out, "PLRank model (format version %d)\n",
                        RequiredFormatVersion(model));
  absl::StrAppendFormat(&out, "objective: %s\n", model.objective);
  absl::StrAppendFormat(&out,
                        "features: %d (numbered from 1, as in LETOR files)\n",
                        model.num_features);
  absl::StrAppendFormat(
      &out, "outputs: %d, transform: %s\n", model.num_outputs,
      model.transform == ScoreTransform::kIdentity ? "identity"
      : model.transform == ScoreTransform::kExpectedRelevance
          ? "expected_relevance"
          : "unknown");
  absl::StrAppendFormat(&out, "base score: [%s]\n",
                        absl::StrJoin(model.base_score, ", "));
  size_t leaves = 0;
  for (const Tree& tree : model.trees) leaves += tree.leaf_value.size();
  absl::StrAppendFormat(&out, "trees: %d (%d leaves)\n", model.trees.size(),
                        leaves);
  if (model.linear_weights.empty()) {
    absl::StrAppend(&out, "linear weights: none\n");
  } else {
    absl::StrAppend(&out, "linear weights:");
    for (size_t f = 0; f < model.linear_weights.size(); ++f) {
      if (model.linear_weights[f] == 0.0) continue;
      absl::StrAppendFormat(&out, " %s=%.9g",
                            FeatureName(model, static_cast<int32_t>(f)),
                            model.linear_weights[f]);
    }
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppendFormat(
      &out, "created: %s\n",
      absl::FormatTime(absl::RFC3339_sec,
                       absl::FromUnixSeconds(model.created_unix_seconds),
                       absl::UTCTimeZone()));
  absl::StrAppendFormat(&out, "train data: %s\nvalid data: %s\n",
                        model.train_data_hash.empty() ? "-" : model.train_data_hash,
                        model.valid_data_hash.empty() ? "-" : model.valid_data_hash);
  absl::StrAppend(&out, "parameters:\n");
  for (const auto& [name, value] : model.parameters) {
    absl::StrAppend(&out, "  ", name, " = ", value, "\n");
  }
  AppendHistory(model, &out);
  for (size_t t = 0; t < model.trees.size(); ++t) AppendTree(model, t, &out);
  return out;
}

}  // namespace plrank
