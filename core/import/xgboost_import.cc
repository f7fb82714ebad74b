#include "core/import/xgboost_import.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/data/file_io.h"
#include "core/model/model_io.h"
#include "core/import/xgboost_json.h"

namespace plrank {
namespace {

using Json = XgboostJson;

// How an objective turns the stored base_score into the base margin, as
// XGBoost 1.7's ObjFunction::ProbToMargin does (in float).
enum class BaseMargin { kIdentity, kLogit, kLog };

struct ObjectiveInfo {
  const char* name;
  BaseMargin base_margin;
};

constexpr ObjectiveInfo kSupportedObjectives[] = {
    {"rank:pairwise", BaseMargin::kIdentity},
    {"rank:ndcg", BaseMargin::kIdentity},
    {"rank:map", BaseMargin::kIdentity},
    {"reg:squarederror", BaseMargin::kIdentity},
    {"reg:squaredlogerror", BaseMargin::kIdentity},
    {"reg:pseudohubererror", BaseMargin::kIdentity},
    {"reg:absoluteerror", BaseMargin::kIdentity},
    {"reg:logistic", BaseMargin::kLogit},
    {"reg:gamma", BaseMargin::kLog},
    {"reg:tweedie", BaseMargin::kLog},
};

absl::Status Malformed(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("XGBoost model: ", what));
}

// The member `key` of `object`, or nullptr when `object` is not an object
// or lacks it.
const Json* Member(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

absl::StatusOr<const Json*> Require(const Json& object, const char* key,
                                    const std::string& where) {
  const Json* member = Member(object, key);
  if (member == nullptr) {
    return Malformed(absl::StrCat(where, " has no \"", key, "\""));
  }
  return member;
}

// XGBoost writes model parameters as strings ("5E-1", "136").
absl::StatusOr<std::string> StringParam(const Json& object, const char* key,
                                        const std::string& where) {
  const Json* member = Member(object, key);
  if (member == nullptr || !member->is_string()) {
    return Malformed(absl::StrCat(where, ".", key, " is not a string"));
  }
  return member->get<std::string>();
}

absl::StatusOr<int64_t> IntParam(const Json& object, const char* key,
                                 const std::string& where,
                                 int64_t missing_value) {
  const Json* member = Member(object, key);
  if (member == nullptr) return missing_value;
  if (member->is_number_integer()) return member->get<int64_t>();
  if (member->is_string()) {
    const std::string text = member->get<std::string>();
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(text.c_str(), &end, 10);
    if (!text.empty() && errno == 0 && *end == '\0') return value;
  }
  return Malformed(absl::StrCat(where, ".", key, " is not an integer"));
}

absl::StatusOr<float> FloatParam(const Json& object, const char* key,
                                 const std::string& where) {
  const Json* member = Member(object, key);
  if (member != nullptr && member->is_number()) return member->get<float>();
  if (member != nullptr && member->is_string()) {
    const std::string text = member->get<std::string>();
    char* end = nullptr;
    errno = 0;
    const float value = std::strtof(text.c_str(), &end);
    if (!text.empty() && errno == 0 && *end == '\0') return value;
  }
  return Malformed(absl::StrCat(where, ".", key, " is not a number"));
}

// A numeric array member of a tree with exactly `size` entries.
template <typename T>
absl::Status ReadArray(const Json& tree, const char* key, size_t size,
                       const std::string& where, std::vector<T>* out) {
  const Json* member = Member(tree, key);
  if (member == nullptr || !member->is_array()) {
    return Malformed(absl::StrCat(where, ".", key, " is not an array"));
  }
  if (member->size() != size) {
    return Malformed(absl::StrFormat("%s.%s has %d entries for %d nodes", where,
                                     key, member->size(), size));
  }
  out->clear();
  out->reserve(size);
  for (const Json& value : *member) {
    if (value.is_boolean()) {
      out->push_back(static_cast<T>(value.get<bool>()));
    } else if (value.is_number_integer()) {
      const int64_t number = value.get<int64_t>();
      if (number < std::numeric_limits<T>::lowest() ||
          number > std::numeric_limits<T>::max()) {
        return Malformed(absl::StrCat(where, ".", key, " entry ", number,
                                      " is out of range"));
      }
      out->push_back(static_cast<T>(number));
    } else if (value.is_number_float() && std::is_floating_point_v<T>) {
      out->push_back(static_cast<T>(value.get<float>()));
    } else {
      return Malformed(
          absl::StrCat(where, ".", key, " has an entry of the wrong type"));
    }
  }
  return absl::OkStatus();
}

// Converts one XGBoost tree: nodes are renumbered in a walk from the root
// (internal nodes and leaves each in preorder), which drops deleted nodes
// and rejects cycles and shared subtrees.
absl::StatusOr<Tree> ConvertTree(const Json& json, size_t index,
                                 int32_t num_features) {
  const std::string where = absl::StrFormat("trees[%d]", index);
  if (!json.is_object()) return Malformed(where + " is not an object");
  absl::StatusOr<const Json*> tree_param = Require(json, "tree_param", where);
  if (!tree_param.ok()) return tree_param.status();
  absl::StatusOr<int64_t> num_nodes =
      IntParam(**tree_param, "num_nodes", where + ".tree_param", -1);
  if (!num_nodes.ok()) return num_nodes.status();
  if (*num_nodes < 1 || *num_nodes > (int64_t{1} << 30)) {
    return Malformed(absl::StrCat(where, " has ", *num_nodes, " nodes"));
  }
  const size_t size = static_cast<size_t>(*num_nodes);
  std::vector<int64_t> left, right, split_index;
  std::vector<uint8_t> default_left;
  std::vector<float> condition, loss_change;
  for (absl::Status status :
       {ReadArray(json, "left_children", size, where, &left),
        ReadArray(json, "right_children", size, where, &right),
        ReadArray(json, "split_indices", size, where, &split_index),
        ReadArray(json, "default_left", size, where, &default_left),
        ReadArray(json, "split_conditions", size, where, &condition)}) {
    if (!status.ok()) return status;
  }
  const bool has_gain = Member(json, "loss_changes") != nullptr;
  if (has_gain) {
    if (absl::Status status =
            ReadArray(json, "loss_changes", size, where, &loss_change);
        !status.ok()) {
      return status;
    }
  }
  // Each node's training cover (sum of hessians): the weights of XGBoost's
  // own TreeSHAP, kept for Explain. Optional, as loss_changes is.
  std::vector<float> hessian;
  if (Member(json, "sum_hessian") != nullptr) {
    if (absl::Status status =
            ReadArray(json, "sum_hessian", size, where, &hessian);
        !status.ok()) {
      return status;
    }
  }
  if (const Json* split_type = Member(json, "split_type");
      split_type != nullptr) {
    std::vector<int64_t> types;
    if (absl::Status status =
            ReadArray(json, "split_type", size, where, &types);
        !status.ok()) {
      return status;
    }
    for (int64_t type : types) {
      if (type != 0) {
        return absl::UnimplementedError(absl::StrCat(
            "XGBoost model: ", where,
            " has a categorical split; only numerical splits are supported"));
      }
    }
  }

  // First walk: number the reachable nodes.
  std::vector<int32_t> our_index(size, std::numeric_limits<int32_t>::min());
  std::vector<int64_t> stack = {0};
  int32_t num_internal = 0;
  int32_t num_leaves = 0;
  std::vector<int64_t> preorder;
  while (!stack.empty()) {
    const int64_t node = stack.back();
    stack.pop_back();
    if (node < 0 || static_cast<size_t>(node) >= size) {
      return Malformed(absl::StrCat(where, " refers to node ", node,
                                    " outside [0, ", size, ")"));
    }
    if (our_index[node] != std::numeric_limits<int32_t>::min()) {
      return Malformed(absl::StrCat(where, " reaches node ", node, " twice"));
    }
    preorder.push_back(node);
    const bool is_leaf = left[node] == -1;
    if (is_leaf != (right[node] == -1)) {
      return Malformed(
          absl::StrCat(where, " node ", node, " has exactly one child"));
    }
    if (is_leaf) {
      our_index[node] = ~num_leaves++;
      continue;
    }
    our_index[node] = num_internal++;
    stack.push_back(right[node]);
    stack.push_back(left[node]);
  }

  Tree tree;
  tree.split_feature.resize(num_internal);
  tree.threshold.resize(num_internal);
  tree.default_left.resize(num_internal);
  tree.left_child.resize(num_internal);
  tree.right_child.resize(num_internal);
  if (has_gain) tree.split_gain.resize(num_internal);
  tree.leaf_value.resize(num_leaves);
  if (!hessian.empty()) tree.leaf_cover.resize(num_leaves);
  for (int64_t node : preorder) {
    const int32_t ours = our_index[node];
    if (ours < 0) {
      if (!std::isfinite(condition[node])) {
        return Malformed(
            absl::StrCat(where, " leaf ", node, " has a non-finite value"));
      }
      tree.leaf_value[~ours] = condition[node];
      if (!hessian.empty()) {
        // The validator's bound, checked here to name the XGBoost node.
        if (!(hessian[node] >= 0 && hessian[node] <= kMaxLeafCover)) {
          return Malformed(absl::StrCat(where, " leaf ", node, " has cover ",
                                        hessian[node], " (sum_hessian)"));
        }
        tree.leaf_cover[~ours] = hessian[node];
      }
      continue;
    }
    if (split_index[node] < 0 || split_index[node] >= num_features) {
      return Malformed(
          absl::StrFormat("%s node %d splits on feature %d "
                          "outside [0, %d)",
                          where, node, split_index[node], num_features));
    }
    // x < c  <=>  x <= nextafter(c, -inf) for every float x, and NaN is
    // routed by default_left either way.
    const float threshold = std::nextafter(
        condition[node], -std::numeric_limits<float>::infinity());
    if (!std::isfinite(condition[node]) || !std::isfinite(threshold)) {
      return Malformed(absl::StrFormat(
          "%s node %d has split condition %g, which has no finite "
          "equivalent under x <= threshold",
          where, node, condition[node]));
    }
    if (default_left[node] > 1) {
      return Malformed(
          absl::StrCat(where, " node ", node, " has default_left not 0 or 1"));
    }
    tree.split_feature[ours] = static_cast<int32_t>(split_index[node]);
    tree.threshold[ours] = threshold;
    tree.default_left[ours] = default_left[node];
    tree.left_child[ours] = our_index[left[node]];
    tree.right_child[ours] = our_index[right[node]];
    if (has_gain) tree.split_gain[ours] = loss_change[node];
  }
  return tree;
}

absl::StatusOr<float> BaseMarginOf(BaseMargin kind, float base_score) {
  float margin = base_score;
  switch (kind) {
    case BaseMargin::kIdentity:
      break;
    case BaseMargin::kLogit:
      margin = -std::log(1.0f / base_score - 1.0f);
      break;
    case BaseMargin::kLog:
      margin = std::log(base_score);
      break;
  }
  if (!std::isfinite(margin)) {
    return Malformed(absl::StrFormat(
        "base_score %g gives a non-finite base margin", base_score));
  }
  return margin;
}

}  // namespace

absl::StatusOr<Ensemble> ImportXgboostJsonModel(const std::string& json_text) {
  absl::StatusOr<Json> parsed = ParseXgboostDocument(json_text);
  if (!parsed.ok()) return Malformed(std::string(parsed.status().message()));
  const Json& root = *parsed;
  absl::StatusOr<const Json*> learner = Require(root, "learner", "model");
  if (!learner.ok()) return learner.status();

  // Objective.
  absl::StatusOr<const Json*> objective_json =
      Require(**learner, "objective", "learner");
  if (!objective_json.ok()) return objective_json.status();
  absl::StatusOr<std::string> objective =
      StringParam(**objective_json, "name", "learner.objective");
  if (!objective.ok()) return objective.status();
  const ObjectiveInfo* info = nullptr;
  for (const ObjectiveInfo& candidate : kSupportedObjectives) {
    if (*objective == candidate.name) info = &candidate;
  }
  if (info == nullptr) {
    std::vector<std::string> names;
    for (const ObjectiveInfo& candidate : kSupportedObjectives) {
      names.push_back(candidate.name);
    }
    return absl::UnimplementedError(absl::StrCat(
        "XGBoost model: objective \"", *objective,
        "\" is not supported (supported: ", absl::StrJoin(names, ", "), ")"));
  }

  // Model parameters.
  absl::StatusOr<const Json*> model_param =
      Require(**learner, "learner_model_param", "learner");
  if (!model_param.ok()) return model_param.status();
  const std::string param_where = "learner.learner_model_param";
  absl::StatusOr<int64_t> num_feature =
      IntParam(**model_param, "num_feature", param_where, -1);
  if (!num_feature.ok()) return num_feature.status();
  if (*num_feature < 0 || *num_feature > std::numeric_limits<int32_t>::max()) {
    return Malformed(absl::StrCat("num_feature ", *num_feature,
                                  " is missing or out of range"));
  }
  absl::StatusOr<int64_t> num_class =
      IntParam(**model_param, "num_class", param_where, 0);
  if (!num_class.ok()) return num_class.status();
  absl::StatusOr<int64_t> num_target =
      IntParam(**model_param, "num_target", param_where, 1);
  if (!num_target.ok()) return num_target.status();
  if (*num_class > 1 || *num_target > 1) {
    return absl::UnimplementedError(absl::StrFormat(
        "XGBoost model: %d classes, %d targets; only single-output "
        "models are supported",
        *num_class, *num_target));
  }
  absl::StatusOr<float> base_score =
      FloatParam(**model_param, "base_score", param_where);
  if (!base_score.ok()) return base_score.status();
  absl::StatusOr<float> base_margin =
      BaseMarginOf(info->base_margin, *base_score);
  if (!base_margin.ok()) return base_margin.status();

  // Booster.
  absl::StatusOr<const Json*> booster =
      Require(**learner, "gradient_booster", "learner");
  if (!booster.ok()) return booster.status();
  absl::StatusOr<std::string> booster_name =
      StringParam(**booster, "name", "learner.gradient_booster");
  if (!booster_name.ok()) return booster_name.status();
  if (*booster_name != "gbtree") {
    return absl::UnimplementedError(
        absl::StrCat("XGBoost model: booster \"", *booster_name,
                     "\" is not supported (only gbtree)"));
  }
  absl::StatusOr<const Json*> gbtree =
      Require(**booster, "model", "learner.gradient_booster");
  if (!gbtree.ok()) return gbtree.status();
  absl::StatusOr<const Json*> trees =
      Require(**gbtree, "trees", "learner.gradient_booster.model");
  if (!trees.ok()) return trees.status();
  if (!(*trees)->is_array()) return Malformed("trees is not an array");

  Ensemble model;
  model.num_features = static_cast<int32_t>(*num_feature);
  model.objective = "xgboost:" + *objective;
  model.num_outputs = 1;
  model.transform = ScoreTransform::kIdentity;
  model.base_score = {static_cast<double>(*base_margin)};
  model.trees.reserve((*trees)->size());
  for (size_t t = 0; t < (*trees)->size(); ++t) {
    absl::StatusOr<Tree> tree =
        ConvertTree((**trees)[t], t, model.num_features);
    if (!tree.ok()) return tree.status();
    model.trees.push_back(*std::move(tree));
  }
  if (const Json* names = Member(**learner, "feature_names");
      names != nullptr && names->is_array() && !names->empty()) {
    if (names->size() != static_cast<size_t>(model.num_features)) {
      return Malformed(absl::StrFormat("%d feature names for %d features",
                                       names->size(), model.num_features));
    }
    for (const Json& name : *names) {
      if (!name.is_string()) return Malformed("a feature name is not a string");
      model.feature_names.push_back(name.get<std::string>());
    }
  }
  std::string version = "unknown version";
  if (const Json* numbers = Member(root, "version");
      numbers != nullptr && numbers->is_array() && numbers->size() == 3 &&
      (*numbers)[0].is_number_integer() && (*numbers)[1].is_number_integer() &&
      (*numbers)[2].is_number_integer()) {
    version = absl::StrFormat("%d.%d.%d", (*numbers)[0].get<int64_t>(),
                              (*numbers)[1].get<int64_t>(),
                              (*numbers)[2].get<int64_t>());
  }
  model.parameters["source"] = "xgboost " + version;
  model.parameters["xgboost_objective"] = *objective;
  model.parameters["xgboost_base_score"] = absl::StrFormat("%.9g", *base_score);
  if (absl::Status status = ValidateEnsemble(model); !status.ok()) {
    return Malformed(
        absl::StrCat("imported model is invalid: ", status.message()));
  }
  return model;
}

absl::StatusOr<Ensemble> ImportXgboostJsonFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) {
    return absl::Status(
        text.status().code(),
        absl::StrCat("XGBoost model file: ", text.status().message()));
  }
  absl::StatusOr<Ensemble> model = ImportXgboostJsonModel(*text);
  if (!model.ok()) {
    return absl::Status(model.status().code(),
                        absl::StrCat(path, ": ", model.status().message()));
  }
  return model;
}

}  // namespace plrank
