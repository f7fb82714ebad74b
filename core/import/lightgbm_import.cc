#include "core/import/lightgbm_import.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/data/file_io.h"
#include "core/data/utf8.h"
#include "core/import/lightgbm_text.h"
#include "core/import/lightgbm_tree.h"
#include "core/model/model_io.h"

namespace plrank {

using lightgbm_internal::AddField;
using lightgbm_internal::ConvertTree;
using lightgbm_internal::Errors;
using lightgbm_internal::Field;
using lightgbm_internal::Fields;
using lightgbm_internal::Find;
using lightgbm_internal::Line;
using lightgbm_internal::ParseInt;
using lightgbm_internal::SplitLines;

absl::StatusOr<Ensemble> ImportLightgbmModel(
    std::string_view text, const std::string& name_for_errors,
    const LightgbmImportOptions& options) {
  const Errors errors(name_for_errors);
  if (options.first_feature_column < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "first feature column ", options.first_feature_column, " < 0"));
  }
  const std::vector<Line> lines =
      SplitLines(absl::string_view(text.data(), text.size()));
  size_t at = 0;
  while (at < lines.size() && lines[at].text.empty()) ++at;
  if (at == lines.size() || lines[at].text != "tree") {
    return errors.Malformed(
        at == lines.size() ? 1 : lines[at].number,
        "not a LightGBM text model (its first line must be \"tree\"; "
        "save the model with Booster.save_model, not dump_model)");
  }
  const int header_line = lines[at].number;
  ++at;

  // Header: key=value lines up to the first tree.
  Fields header;
  for (; at < lines.size(); ++at) {
    const Line& line = lines[at];
    if (line.text.empty()) continue;
    if (absl::StartsWith(line.text, "Tree=") || line.text == "end of trees") {
      break;
    }
    if (absl::Status status =
            AddField(line, /*allow_bare=*/true, errors, &header);
        !status.ok()) {
      return status;
    }
  }
  auto require = [&](const char* key) -> absl::StatusOr<const Field*> {
    const Field* field = Find(header, key);
    if (field == nullptr) {
      return errors.Malformed(header_line,
                              absl::StrCat("header has no ", key, "="));
    }
    return field;
  };
  absl::StatusOr<const Field*> version = require("version");
  if (!version.ok()) return version.status();
  if ((*version)->value != "v2" && (*version)->value != "v3" &&
      (*version)->value != "v4") {
    return errors.Unsupported(
        (*version)->line,
        absl::StrCat("version=", (*version)->value.substr(0, 20),
                     " is not supported (v2, v3, v4 are)"));
  }
  absl::StatusOr<const Field*> num_class_field = require("num_class");
  if (!num_class_field.ok()) return num_class_field.status();
  absl::StatusOr<int64_t> num_class =
      ParseInt(**num_class_field, "num_class", errors);
  if (!num_class.ok()) return num_class.status();
  int64_t trees_per_iteration = *num_class;
  if (const Field* field = Find(header, "num_tree_per_iteration");
      field != nullptr) {
    absl::StatusOr<int64_t> value =
        ParseInt(*field, "num_tree_per_iteration", errors);
    if (!value.ok()) return value.status();
    trees_per_iteration = *value;
  }
  if (*num_class != 1 || trees_per_iteration != 1) {
    return errors.Unsupported(
        (*num_class_field)->line,
        absl::StrFormat("num_class=%d, num_tree_per_iteration=%d: only "
                        "single-output models are supported",
                        *num_class, trees_per_iteration));
  }
  if (const Field* field = Find(header, "average_output"); field != nullptr) {
    return errors.Unsupported(
        field->line,
        "average_output (boosting=rf, a random forest whose "
        "trees are averaged) is not supported");
  }
  absl::StatusOr<const Field*> max_feature_field = require("max_feature_idx");
  if (!max_feature_field.ok()) return max_feature_field.status();
  absl::StatusOr<int64_t> max_feature_idx =
      ParseInt(**max_feature_field, "max_feature_idx", errors);
  if (!max_feature_idx.ok()) return max_feature_idx.status();
  // feature_names and feature_infos hold one entry per column, so they
  // bound the column count by what the file holds.
  std::vector<absl::string_view> names;
  for (const char* key : {"feature_names", "feature_infos"}) {
    absl::StatusOr<const Field*> field = require(key);
    if (!field.ok()) return field.status();
    const std::vector<absl::string_view> entries =
        absl::StrSplit((*field)->value, ' ', absl::SkipEmpty());
    if (*max_feature_idx < 0 ||
        *max_feature_idx >= std::numeric_limits<int32_t>::max() ||
        static_cast<int64_t>(entries.size()) != *max_feature_idx + 1) {
      return errors.Malformed(
          (*field)->line,
          absl::StrFormat("%s has %d entries for max_feature_idx=%d", key,
                          entries.size(), *max_feature_idx));
    }
    if (names.empty()) {
      // The names become model text, which model files store as UTF-8.
      if (!IsValidUtf8((*field)->value)) {
        return errors.Malformed(
            (*field)->line,
            "feature_names is not valid UTF-8 (model files store text as "
            "UTF-8)");
      }
      names = entries;
    }
  }
  const int32_t num_columns = static_cast<int32_t>(*max_feature_idx + 1);
  if (options.first_feature_column > num_columns) {
    return errors.Malformed(
        (*max_feature_field)->line,
        absl::StrFormat("first feature column %d is beyond the model's %d "
                        "columns",
                        options.first_feature_column, num_columns));
  }

  Ensemble model;
  model.num_features = num_columns - options.first_feature_column;
  model.num_outputs = 1;
  model.transform = ScoreTransform::kIdentity;
  model.base_score = {0.0};
  for (int32_t c = options.first_feature_column; c < num_columns; ++c) {
    model.feature_names.emplace_back(names[c]);
  }

  // Trees: "Tree=<i>" then key=value lines up to a blank line.
  bool ended = false;
  while (at < lines.size()) {
    const Line& line = lines[at];
    if (line.text.empty()) {
      ++at;
      continue;
    }
    if (line.text == "end of trees") {
      ended = true;
      break;
    }
    int64_t index = -1;
    if (!absl::StartsWith(line.text, "Tree=") ||
        !absl::SimpleAtoi(line.text.substr(5), &index)) {
      return errors.Malformed(
          line.number, absl::StrCat("expected \"Tree=", model.trees.size(),
                                    "\" or \"end of trees\", got \"",
                                    line.text.substr(0, 60), "\""));
    }
    if (index != static_cast<int64_t>(model.trees.size())) {
      return errors.Malformed(
          line.number, absl::StrCat("Tree=", index, " where Tree=",
                                    model.trees.size(), " was expected"));
    }
    Fields fields;
    for (++at; at < lines.size() && !lines[at].text.empty() &&
               !absl::StartsWith(lines[at].text, "Tree=") &&
               lines[at].text != "end of trees";
         ++at) {
      if (absl::Status status =
              AddField(lines[at], /*allow_bare=*/false, errors, &fields);
          !status.ok()) {
        return status;
      }
    }
    absl::StatusOr<Tree> tree = ConvertTree(
        fields, line.number, num_columns, options.first_feature_column, errors);
    if (!tree.ok()) return tree.status();
    model.trees.push_back(*std::move(tree));
  }
  const int last_line = lines.empty() ? 1 : lines.back().number;
  if (!ended) {
    return errors.Malformed(last_line,
                            "no \"end of trees\" line: the file is truncated");
  }
  if (model.trees.empty()) {
    return errors.Malformed(lines[at].number, "the model has no trees");
  }
  if (const Field* sizes = Find(header, "tree_sizes"); sizes != nullptr) {
    const std::vector<absl::string_view> entries =
        absl::StrSplit(sizes->value, ' ', absl::SkipEmpty());
    if (entries.size() != model.trees.size()) {
      return errors.Malformed(
          sizes->line,
          absl::StrFormat("tree_sizes lists %d trees but the file holds %d",
                          entries.size(), model.trees.size()));
    }
  }

  std::string objective;
  if (const Field* field = Find(header, "objective"); field != nullptr) {
    if (!IsValidUtf8(field->value)) {
      return errors.Malformed(
          field->line,
          "objective is not valid UTF-8 (model files store text as UTF-8)");
    }
    objective = std::string(field->value);
  }
  const std::string objective_name =
      std::string(objective.substr(0, objective.find(' ')));
  model.objective =
      objective_name.empty() ? "lightgbm" : "lightgbm:" + objective_name;
  model.parameters["source"] = absl::StrCat("lightgbm ", (*version)->value);
  model.parameters["lightgbm_objective"] = objective;
  model.parameters["lightgbm_first_feature_column"] =
      absl::StrCat(options.first_feature_column);
  if (absl::Status status = ValidateEnsemble(model); !status.ok()) {
    return errors.Malformed(
        header_line,
        absl::StrCat("imported model is invalid: ", status.message()));
  }
  return model;
}

absl::StatusOr<Ensemble> ImportLightgbmModelFile(
    const std::string& path, const LightgbmImportOptions& options) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  return ImportLightgbmModel(*text, path, options);
}

}  // namespace plrank
