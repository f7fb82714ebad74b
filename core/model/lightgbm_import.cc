#include "core/model/lightgbm_import.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/data/file_io.h"
#include "core/model/model_io.h"

namespace plrank {
namespace {

// LightGBM's decision_type bits (tree.h): kCategoricalMask, kDefaultLeftMask,
// and the missing type in bits 2-3.
constexpr int kCategoricalBit = 1;
constexpr int kDefaultLeftBit = 2;
enum MissingType { kMissingNone = 0, kMissingZero = 1, kMissingNaN = 2 };

struct Line {
  absl::string_view text;
  int number;  // 1-based
};

// One `key=value` line of the header or of a tree block.
struct Field {
  absl::string_view value;
  int line = 0;
};
using Fields = std::map<absl::string_view, Field, std::less<>>;

std::vector<Line> SplitLines(absl::string_view text) {
  std::vector<Line> lines;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    lines.push_back({absl::StripSuffix(line, "\r"), ++number});
  }
  return lines;
}

// Builds errors that start with "<file>:<line>: ".
class Errors {
 public:
  explicit Errors(const std::string& name) : name_(name) {}

  absl::Status Malformed(int line, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ":", line, ": LightGBM model: ", what));
  }
  absl::Status Unsupported(int line, absl::string_view what) const {
    return absl::UnimplementedError(
        absl::StrCat(name_, ":", line, ": LightGBM model: ", what));
  }

 private:
  const std::string& name_;
};

// Adds `line` as key=value to `fields`; a bare word is a key with an empty
// value (LightGBM writes `average_output` so).
absl::Status AddField(const Line& line, bool allow_bare, const Errors& errors,
                      Fields* fields) {
  const size_t equals = line.text.find('=');
  if (equals == absl::string_view::npos && !allow_bare) {
    return errors.Malformed(
        line.number, absl::StrCat("expected key=value, got \"",
                                  line.text.substr(0, 60), "\""));
  }
  const absl::string_view key = line.text.substr(0, equals);
  const absl::string_view value = equals == absl::string_view::npos
                                     ? absl::string_view()
                                     : line.text.substr(equals + 1);
  auto [it, inserted] = fields->emplace(key, Field{value, line.number});
  if (!inserted) {
    return errors.Malformed(
        line.number, absl::StrCat("\"", key, "\" appears twice (first on line ",
                                  it->second.line, ")"));
  }
  return absl::OkStatus();
}

const Field* Find(const Fields& fields, absl::string_view key) {
  auto it = fields.find(key);
  return it == fields.end() ? nullptr : &it->second;
}

absl::StatusOr<int64_t> ParseInt(const Field& field, absl::string_view key,
                                 const Errors& errors) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(field.value, &value)) {
    return errors.Malformed(field.line,
                            absl::StrCat(key, "=", field.value.substr(0, 40),
                                         " is not an integer"));
  }
  return value;
}

// The space-separated numbers of `field`, which must hold exactly `count`
// entries (so sizes come from what the file holds, never from a count
// alone). Doubles must be finite unless `allow_infinite` (never NaN);
// integers must fit T.
template <typename T>
absl::Status ParseArray(const Field& field, absl::string_view key,
                        int64_t count, const Errors& errors,
                        std::vector<T>* out, bool allow_infinite = false) {
  const std::vector<absl::string_view> tokens =
      absl::StrSplit(field.value, ' ', absl::SkipEmpty());
  if (static_cast<int64_t>(tokens.size()) != count) {
    return errors.Malformed(
        field.line, absl::StrFormat("%s has %d entries, expected %d", key,
                                    tokens.size(), count));
  }
  out->clear();
  out->reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      double value = 0;
      if (!absl::SimpleAtod(tokens[i], &value) || std::isnan(value) ||
          (!allow_infinite && std::isinf(value))) {
        return errors.Malformed(
            field.line,
            absl::StrFormat("%s entry %d (\"%s\") is not a %snumber", key, i,
                            tokens[i].substr(0, 40),
                            allow_infinite ? "" : "finite "));
      }
      out->push_back(static_cast<T>(value));
    } else {
      int64_t value = 0;
      if (!absl::SimpleAtoi(tokens[i], &value) ||
          value < std::numeric_limits<T>::lowest() ||
          value > std::numeric_limits<T>::max()) {
        return errors.Malformed(
            field.line, absl::StrFormat("%s entry %d (\"%s\") is not an "
                                        "integer in range",
                                        key, i, tokens[i].substr(0, 40)));
      }
      out->push_back(static_cast<T>(value));
    }
  }
  return absl::OkStatus();
}

// The double LightGBM reads from the text of float x: its shortest decimal
// form, as PLRank's LETOR writer prints it and as data files hold it
// ("0.98", not the float's exact binary value 0.98000001907...).
double DecimalValue(float x) {
  char text[32];
  const std::to_chars_result printed = std::to_chars(text, text + sizeof(text), x);
  double value = x;
  std::from_chars(text, printed.ptr, value);
  return value;
}

// The float threshold for LightGBM's double threshold t (some float's
// decimal value is <= t): the largest float x whose decimal value LightGBM
// sends left (<= t). Both
// roundings (text -> float, text -> double) are monotone, so one float
// threshold reproduces LightGBM on every input whose text is its float's
// shortest form: every value of up to 6 significant digits. The plain
// largest float <= t would not: LightGBM puts thresholds one double above a
// training value (0.98 -> 0.9800000000000001), and the float nearest 0.98
// lies above that. The answer is one of the three floats around t: the
// decimal value of a float is within half a float step of it.
float FloatThreshold(double t) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kMax = std::numeric_limits<float>::max();
  // The largest float <= t (converting a double beyond float range is
  // undefined, hence the clamp).
  float below = t >= kMax ? kMax : t <= -kMax ? -kMax : static_cast<float>(t);
  if (static_cast<double>(below) > t) below = std::nextafter(below, -kInf);
  const float above = std::nextafter(below, kInf);
  if (std::isfinite(above) && DecimalValue(above) <= t) return above;
  if (DecimalValue(below) <= t) return below;
  return std::nextafter(below, -kInf);
}

// Every internal node and leaf must be reached exactly once from node 0.
absl::Status CheckShape(const Tree& tree, int line, const Errors& errors) {
  const int32_t internal = tree.num_internal_nodes();
  const int32_t leaves = tree.num_leaves();
  std::vector<uint8_t> node_seen(internal, 0), leaf_seen(leaves, 0);
  std::vector<int32_t> stack = {0};
  node_seen[0] = 1;
  int32_t reached = 1;
  while (!stack.empty()) {
    const int32_t node = stack.back();
    stack.pop_back();
    for (const int32_t child : {tree.left_child[node], tree.right_child[node]}) {
      const bool is_leaf = child < 0;
      const int32_t index = is_leaf ? ~child : child;
      if (index >= (is_leaf ? leaves : internal)) {
        return errors.Malformed(
            line, absl::StrFormat("node %d has child %d, outside the %d "
                                  "nodes and %d leaves",
                                  node, child, internal, leaves));
      }
      uint8_t& seen = is_leaf ? leaf_seen[index] : node_seen[index];
      if (seen) {
        return errors.Malformed(
            line, absl::StrFormat("%s %d is reached twice (from node %d)",
                                  is_leaf ? "leaf" : "node", index, node));
      }
      seen = 1;
      reached += 1;
      if (!is_leaf) stack.push_back(child);
    }
  }
  if (reached != internal + leaves) {
    return errors.Malformed(line, "some nodes are not reachable from node 0");
  }
  return absl::OkStatus();
}

// Converts the tree block `fields` whose "Tree=" line is `line`.
absl::StatusOr<Tree> ConvertTree(const Fields& fields, int line,
                                 int32_t num_columns,
                                 const LightgbmImportOptions& options,
                                 const Errors& errors) {
  for (const char* key : {"num_leaves", "num_cat", "leaf_value"}) {
    if (Find(fields, key) == nullptr) {
      return errors.Malformed(line, absl::StrCat("tree has no ", key));
    }
  }
  if (const Field* linear = Find(fields, "is_linear");
      linear != nullptr && linear->value != "0") {
    return errors.Unsupported(
        linear->line,
        absl::StrCat("is_linear=", linear->value.substr(0, 20),
                     ": linear trees (linear_tree=true) hold a linear model "
                     "in every leaf, which PLRank trees cannot express; "
                     "retrain with linear_tree=false"));
  }
  absl::StatusOr<int64_t> num_cat =
      ParseInt(*Find(fields, "num_cat"), "num_cat", errors);
  if (!num_cat.ok()) return num_cat.status();
  if (*num_cat != 0) {
    return errors.Unsupported(
        Find(fields, "num_cat")->line,
        absl::StrCat("num_cat=", *num_cat,
                     ": categorical splits are not supported; retrain with "
                     "the features as numerical ones"));
  }
  const Field& num_leaves_field = *Find(fields, "num_leaves");
  absl::StatusOr<int64_t> num_leaves =
      ParseInt(num_leaves_field, "num_leaves", errors);
  if (!num_leaves.ok()) return num_leaves.status();
  if (*num_leaves < 1) {
    return errors.Malformed(num_leaves_field.line,
                            absl::StrCat("num_leaves=", *num_leaves));
  }
  Tree tree;
  if (absl::Status status = ParseArray(*Find(fields, "leaf_value"),
                                       "leaf_value", *num_leaves, errors,
                                       &tree.leaf_value);
      !status.ok()) {
    return status;
  }
  if (const Field* counts = Find(fields, "leaf_count"); counts != nullptr) {
    if (absl::Status status = ParseArray(*counts, "leaf_count", *num_leaves,
                                         errors, &tree.leaf_count);
        !status.ok()) {
      return status;
    }
    for (int32_t count : tree.leaf_count) {
      if (count < 0) {
        return errors.Malformed(counts->line, "leaf_count has a negative entry");
      }
    }
  }
  // A single leaf: LightGBM reads nothing else (the split arrays are empty).
  if (*num_leaves == 1) return tree;

  const int64_t splits = *num_leaves - 1;
  for (const char* key :
       {"split_feature", "threshold", "left_child", "right_child"}) {
    if (Find(fields, key) == nullptr) {
      return errors.Malformed(line, absl::StrCat("tree has no ", key));
    }
  }
  std::vector<int32_t> columns;
  std::vector<double> thresholds;
  std::vector<int32_t> decision_types(splits, 0);  // absent: None, right
  for (absl::Status status :
       {ParseArray(*Find(fields, "split_feature"), "split_feature", splits,
                   errors, &columns),
        // LightGBM writes threshold inf for "every value left, NaN to the
        // default side".
        ParseArray(*Find(fields, "threshold"), "threshold", splits, errors,
                   &thresholds, /*allow_infinite=*/true),
        ParseArray(*Find(fields, "left_child"), "left_child", splits, errors,
                   &tree.left_child),
        ParseArray(*Find(fields, "right_child"), "right_child", splits, errors,
                   &tree.right_child)}) {
    if (!status.ok()) return status;
  }
  const Field* decisions = Find(fields, "decision_type");
  if (decisions != nullptr) {
    if (absl::Status status = ParseArray(*decisions, "decision_type", splits,
                                         errors, &decision_types);
        !status.ok()) {
      return status;
    }
  }
  if (const Field* gains = Find(fields, "split_gain"); gains != nullptr) {
    if (absl::Status status =
            ParseArray(*gains, "split_gain", splits, errors, &tree.split_gain);
        !status.ok()) {
      return status;
    }
  }
  tree.split_feature.resize(splits);
  if (absl::Status status = CheckShape(tree, Find(fields, "left_child")->line,
                                       errors);
      !status.ok()) {
    return status;
  }

  tree.threshold.resize(splits);
  tree.default_left.resize(splits);
  tree.zero_as_missing.assign(splits, 0);
  bool any_zero_as_missing = false;
  for (int64_t n = 0; n < splits; ++n) {
    const int32_t column = columns[n];
    if (column < options.first_feature_column || column >= num_columns) {
      return errors.Malformed(
          Find(fields, "split_feature")->line,
          absl::StrFormat(
              "node %d splits on column %d, outside columns [%d, %d) (the "
              "model's features under first feature column %d%s)",
              n, column, options.first_feature_column, num_columns,
              options.first_feature_column,
              column >= 0 && column < options.first_feature_column
                  ? "; if column 0 is a feature, import with "
                    "--lightgbm_first_feature_column=0"
                  : ""));
    }
    // decision_type is only non-zero when the line exists.
    const int32_t type = decision_types[n];
    const int missing = (type >> 2) & 3;
    if (type < 0 || type > 15 || missing > kMissingNaN) {
      return errors.Malformed(
          decisions->line,
          absl::StrFormat("node %d has decision_type %d, not a LightGBM "
                          "split type",
                          n, type));
    }
    if (type & kCategoricalBit) {
      return errors.Unsupported(
          decisions->line,
          absl::StrFormat("node %d is a categorical split (decision_type %d); "
                          "only numerical splits are supported",
                          n, type));
    }
    const double t = thresholds[n];
    tree.split_feature[n] = column - options.first_feature_column;
    bool default_left = (type & kDefaultLeftBit) != 0;
    // Beyond float range a threshold sends every finite value one way (our
    // inputs are finite: readers and the server refuse infinities). Above,
    // FLT_MAX does the same; below, no float threshold sends every value
    // right, so the children swap sides under threshold FLT_MAX and the
    // missing side flips with them.
    const bool below_floats =
        t < DecimalValue(-std::numeric_limits<float>::max());
    tree.threshold[n] = below_floats ? std::numeric_limits<float>::max()
                                     : FloatThreshold(t);
    if (below_floats) {
      std::swap(tree.left_child[n], tree.right_child[n]);
      default_left = !default_left;
    }
    switch (missing) {
      case kMissingNone:
        // LightGBM replaces NaN by 0 and compares it as a value; 0 goes
        // left exactly when 0 <= t, which sits on our left side unless the
        // children swapped.
        tree.default_left[n] = (0.0 <= t) != below_floats;
        break;
      case kMissingZero:
        tree.default_left[n] = default_left;
        tree.zero_as_missing[n] = 1;
        any_zero_as_missing = true;
        break;
      case kMissingNaN:
        tree.default_left[n] = default_left;
        break;
    }
  }
  // Stored only when used, as the artifact stores it.
  if (!any_zero_as_missing) tree.zero_as_missing.clear();
  return tree;
}

}  // namespace

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
    if (absl::Status status = AddField(line, /*allow_bare=*/true, errors,
                                       &header);
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
        (*version)->line, absl::StrCat("version=", (*version)->value.substr(0, 20),
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
        field->line, "average_output (boosting=rf, a random forest whose "
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
        static_cast<int64_t>(entries.size()) != *max_feature_idx + 1) {
      return errors.Malformed(
          (*field)->line,
          absl::StrFormat("%s has %d entries for max_feature_idx=%d", key,
                          entries.size(), *max_feature_idx));
    }
    if (names.empty()) names = entries;
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
      return errors.Malformed(line.number,
                              absl::StrCat("Tree=", index, " where Tree=",
                                           model.trees.size(), " was expected"));
    }
    Fields fields;
    for (++at; at < lines.size() && !lines[at].text.empty() &&
               !absl::StartsWith(lines[at].text, "Tree=") &&
               lines[at].text != "end of trees";
         ++at) {
      if (absl::Status status = AddField(lines[at], /*allow_bare=*/false,
                                         errors, &fields);
          !status.ok()) {
        return status;
      }
    }
    absl::StatusOr<Tree> tree =
        ConvertTree(fields, line.number, num_columns, options, errors);
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
    objective = std::string(field->value);
  }
  const std::string objective_name =
      std::string(objective.substr(0, objective.find(' ')));
  model.objective =
      objective_name.empty() ? "lightgbm" : "lightgbm:" + objective_name;
  model.parameters["source"] =
      absl::StrCat("lightgbm ", (*version)->value);
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
