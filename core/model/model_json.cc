// DumpModelJson: the model as one JSON document (`--dump_format=json`),
// schema in docs/lightgbm-habits.md "JSON dump".

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/ensemble.h"
#include "core/model/model_io.h"
#include "core/model/model_json.h"
#include "nlohmann/json.hpp"

namespace plrank {
namespace {

using Json = nlohmann::ordered_json;

void AddFeature(const Ensemble& model, int32_t feature, Json* node) {
  (*node)["feature"] = int64_t{feature} + 1;  // 1-based, as in LETOR files
  if (feature >= 0 &&
      static_cast<size_t>(feature) < model.feature_names.size() &&
      !model.feature_names[feature].empty()) {
    (*node)["feature_name"] = model.feature_names[feature];
  }
}

Json LeafJson(const Tree& tree, int32_t leaf) {
  Json node;
  node["leaf_index"] = leaf;
  node["leaf_value"] = tree.leaf_value[leaf];
  if (static_cast<size_t>(leaf) < tree.leaf_count.size()) {
    node["leaf_count"] = tree.leaf_count[leaf];
  }
  if (static_cast<size_t>(leaf) < tree.leaf_cover.size()) {
    node["leaf_cover"] = tree.leaf_cover[leaf];
  }
  return node;
}

// Nested like LightGBM's dump_model: a split holds its children. The model
// is validated (every node reached once from the root), so the recursion
// ends; its depth is the tree's.
Json NodeJson(const Ensemble& model, const Tree& tree, int32_t child) {
  if (child < 0) return LeafJson(tree, ~child);
  const int32_t n = child;
  Json node;
  node["split_index"] = n;
  AddFeature(model, tree.split_feature[n], &node);
  node["threshold"] = static_cast<double>(tree.threshold[n]);
  node["decision_type"] = "<=";
  node["default_left"] = tree.default_left[n] != 0;
  node["missing_type"] = tree.treats_zero_as_missing(n) ? "Zero" : "NaN";
  if (static_cast<size_t>(n) < tree.split_gain.size()) {
    node["split_gain"] = tree.split_gain[n];
  }
  node["left_child"] = NodeJson(model, tree, tree.left_child[n]);
  node["right_child"] = NodeJson(model, tree, tree.right_child[n]);
  return node;
}

Json MetricsJson(const std::map<std::string, double>& metrics) {
  Json out = Json::object();
  for (const auto& [name, value] : metrics) out[name] = value;
  return out;
}

}  // namespace

std::string DumpModelJson(const Ensemble& model) {
  Json out;
  out["schema"] = "plrank.model";
  out["schema_version"] = kModelJsonSchemaVersion;
  out["format_version"] = RequiredFormatVersion(model);
  out["objective"] = model.objective;
  out["num_features"] = model.num_features;
  Json names = Json::array();
  for (int32_t f = 0; f < model.num_features; ++f) {
    if (static_cast<size_t>(f) < model.feature_names.size() &&
        !model.feature_names[f].empty()) {
      Json named;
      named["feature"] = int64_t{f} + 1;
      named["name"] = model.feature_names[f];
      names.push_back(std::move(named));
    }
  }
  out["feature_names"] = std::move(names);
  out["num_outputs"] = model.num_outputs;
  out["score_transform"] =
      model.transform == ScoreTransform::kIdentity ? "identity"
      : model.transform == ScoreTransform::kExpectedRelevance
          ? "expected_relevance"
          : "unknown";
  Json base = Json::array();
  for (int32_t k = 0; k < model.num_outputs; ++k) {
    base.push_back(static_cast<size_t>(k) < model.base_score.size()
                       ? model.base_score[k]
                       : 0.0);
  }
  out["base_score"] = std::move(base);
  Json linear = Json::array();
  for (size_t f = 0; f < model.linear_weights.size(); ++f) {
    if (model.linear_weights[f] == 0.0) continue;
    Json weight;
    AddFeature(model, static_cast<int32_t>(f), &weight);
    weight["weight"] = model.linear_weights[f];
    linear.push_back(std::move(weight));
  }
  out["linear_weights"] = std::move(linear);
  out["best_iteration"] = model.best_iteration;
  out["created_unix_seconds"] = model.created_unix_seconds;
  out["train_data_hash"] = model.train_data_hash;
  out["valid_data_hash"] = model.valid_data_hash;
  Json parameters = Json::object();
  for (const auto& [name, value] : model.parameters) parameters[name] = value;
  out["parameters"] = std::move(parameters);
  Json history = Json::array();
  for (const IterationMetrics& m : model.history) {
    Json line;
    line["iteration"] = m.iteration;
    line["train_loss"] = m.train_loss;
    line["train"] = MetricsJson(m.train);
    line["valid"] = MetricsJson(m.valid);
    history.push_back(std::move(line));
  }
  out["history"] = std::move(history);
  Json trees = Json::array();
  for (size_t t = 0; t < model.trees.size(); ++t) {
    const Tree& tree = model.trees[t];
    Json entry;
    entry["tree_index"] = t;
    entry["output"] = model.num_outputs > 0 ? t % model.num_outputs : 0;
    entry["num_leaves"] = tree.num_leaves();
    entry["num_splits"] = tree.num_internal_nodes();
    entry["tree_structure"] =
        tree.num_internal_nodes() == 0 ? LeafJson(tree, 0)
                                       : NodeJson(model, tree, 0);
    trees.push_back(std::move(entry));
  }
  out["trees"] = std::move(trees);
  // NaN cannot occur (ValidateEnsemble requires finite values) except in
  // history metrics, which nlohmann writes as null.
  return out.dump(1, ' ', /*ensure_ascii=*/false,
                  Json::error_handler_t::replace) +
         "\n";
}

}  // namespace plrank
