#include "core/import/lightgbm_export.h"

#include <charconv>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/import/lightgbm_tree.h"
#include "core/model/model_io.h"

namespace plrank {
namespace {

constexpr int kDefaultLeftBit = 2;
constexpr int kMissingZeroBits = 1 << 2;
constexpr int kMissingNaNBits = 2 << 2;

// Shortest round-trip text: every parser reads back the same double.
std::string Number(double value) {
  char text[32];
  const std::to_chars_result printed =
      std::to_chars(text, text + sizeof(text), value);
  return std::string(text, printed.ptr);
}

template <typename T, typename Format>
std::string Joined(const std::vector<T>& values, Format format) {
  return absl::StrJoin(values, " ", [&format](std::string* out, const T& v) {
    out->append(format(v));
  });
}

// LightGBM splits feature_names on spaces and refuses JSON punctuation in
// names.
std::string ColumnName(const Ensemble& model, int32_t feature) {
  std::string name;
  if (static_cast<size_t>(feature) < model.feature_names.size()) {
    name = model.feature_names[feature];
  }
  if (name.empty()) return absl::StrCat("Column_", feature + 1);
  for (char& c : name) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' ||
        c == ',' || c == ':' || c == '[' || c == ']' || c == '{' || c == '}') {
      c = '_';
    }
  }
  return name;
}

void AppendTree(const Tree& tree, size_t index, double leaf_offset,
                std::string* out) {
  const int32_t splits = tree.num_internal_nodes();
  absl::StrAppend(out, "Tree=", index, "\n");
  absl::StrAppend(out, "num_leaves=", tree.num_leaves(), "\n");
  absl::StrAppend(out, "num_cat=0\n");
  std::vector<int32_t> columns(tree.split_feature);
  for (int32_t& column : columns) column += 1;
  std::vector<int32_t> decision_types(splits);
  std::vector<double> thresholds(splits);
  for (int32_t n = 0; n < splits; ++n) {
    decision_types[n] =
        (tree.treats_zero_as_missing(n) ? kMissingZeroBits : kMissingNaNBits) |
        (tree.default_left[n] ? kDefaultLeftBit : 0);
    thresholds[n] = lightgbm_internal::DecimalValue(tree.threshold[n]);
  }
  std::vector<double> gains = tree.split_gain;
  gains.resize(splits, 0.0);
  auto integer = [](int32_t v) { return absl::StrCat(v); };
  absl::StrAppend(out, "split_feature=", Joined(columns, integer), "\n");
  absl::StrAppend(out, "split_gain=", Joined(gains, Number), "\n");
  absl::StrAppend(out, "threshold=", Joined(thresholds, Number), "\n");
  absl::StrAppend(out, "decision_type=", Joined(decision_types, integer),
                  "\n");
  absl::StrAppend(out, "left_child=", Joined(tree.left_child, integer), "\n");
  absl::StrAppend(out, "right_child=", Joined(tree.right_child, integer),
                  "\n");
  std::vector<double> leaves = tree.leaf_value;
  // Added once, here, so the sum a scorer starts from the base score and
  // adds the first tree to is the leaf value itself.
  if (leaf_offset != 0.0) {
    for (double& leaf : leaves) leaf = leaf_offset + leaf;
  }
  absl::StrAppend(out, "leaf_value=", Joined(leaves, Number), "\n");
  if (static_cast<int32_t>(tree.leaf_count.size()) == tree.num_leaves()) {
    absl::StrAppend(out, "leaf_count=", Joined(tree.leaf_count, integer),
                    "\n");
  }
  absl::StrAppend(out, "is_linear=0\nshrinkage=1\n\n\n");
}

}  // namespace

absl::StatusOr<std::string> ExportLightgbmModel(const Ensemble& model) {
  if (absl::Status status = ValidateEnsemble(model); !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model is invalid: ", status.message()));
  }
  if (model.num_outputs != 1 || model.transform != ScoreTransform::kIdentity) {
    return absl::UnimplementedError(absl::StrCat(
        "the model has ", model.num_outputs,
        " outputs combined by a softmax (expected relevance); LightGBM's "
        "text format expresses single-output models whose score is the sum "
        "of their trees (its multiclass softmax is another transform)"));
  }
  if (!model.linear_weights.empty()) {
    return absl::UnimplementedError(
        "the model has a linear part (a linear ranker or a linear term); "
        "LightGBM's models are trees only (its linear_tree is a linear model "
        "per leaf)");
  }
  const double base = model.base_score.empty() ? 0.0 : model.base_score[0];
  std::string objective = "lambdarank";
  if (auto it = model.parameters.find("lightgbm_objective");
      it != model.parameters.end() && !it->second.empty() &&
      model.objective.rfind("lightgbm", 0) == 0) {
    objective = it->second;  // an imported LightGBM model keeps its line
  }
  std::string out = "tree\nversion=v4\nnum_class=1\n"
                    "num_tree_per_iteration=1\nlabel_index=0\n";
  const int32_t columns = model.num_features + 1;
  absl::StrAppend(&out, "max_feature_idx=", columns - 1, "\n");
  absl::StrAppend(&out, "objective=", objective, "\n");
  std::vector<std::string> names = {"Column_0"};
  for (int32_t f = 0; f < model.num_features; ++f) {
    names.push_back(ColumnName(model, f));
  }
  absl::StrAppend(&out, "feature_names=", absl::StrJoin(names, " "), "\n");
  std::vector<std::string> infos(static_cast<size_t>(columns), "none");
  absl::StrAppend(&out, "feature_infos=", absl::StrJoin(infos, " "), "\n\n");
  if (model.trees.empty()) {
    Tree single;
    single.leaf_value = {0.0};
    AppendTree(single, 0, base, &out);
  }
  for (size_t t = 0; t < model.trees.size(); ++t) {
    AppendTree(model.trees[t], t, t == 0 ? base : 0.0, &out);
  }
  absl::StrAppend(&out, "end of trees\n\npandas_categorical:null\n");
  return out;
}

}  // namespace plrank
