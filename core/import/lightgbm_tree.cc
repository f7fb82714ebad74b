#include "core/import/lightgbm_tree.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace plrank::lightgbm_internal {
namespace {

// LightGBM's decision_type bits (tree.h): kCategoricalMask, kDefaultLeftMask,
// and the missing type in bits 2-3.
constexpr int kCategoricalBit = 1;
constexpr int kDefaultLeftBit = 2;
enum MissingType { kMissingNone = 0, kMissingZero = 1, kMissingNaN = 2 };


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
    for (const int32_t child :
         {tree.left_child[node], tree.right_child[node]}) {
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

}  // namespace

absl::StatusOr<Tree> ConvertTree(const Fields& fields, int line,
                                 int32_t num_columns,
                                 int32_t first_feature_column,
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
  if (absl::Status status =
          ParseArray(*Find(fields, "leaf_value"), "leaf_value", *num_leaves,
                     errors, &tree.leaf_value);
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
        return errors.Malformed(counts->line,
                                "leaf_count has a negative entry");
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
  if (absl::Status status =
          CheckShape(tree, Find(fields, "left_child")->line, errors);
      !status.ok()) {
    return status;
  }

  tree.threshold.resize(splits);
  tree.default_left.resize(splits);
  tree.zero_as_missing.assign(splits, 0);
  bool any_zero_as_missing = false;
  for (int64_t n = 0; n < splits; ++n) {
    const int32_t column = columns[n];
    if (column < first_feature_column || column >= num_columns) {
      return errors.Malformed(
          Find(fields, "split_feature")->line,
          absl::StrFormat(
              "node %d splits on column %d, outside columns [%d, %d) (the "
              "model's features under first feature column %d%s)",
              n, column, first_feature_column, num_columns,
              first_feature_column,
              column >= 0 && column < first_feature_column
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
    tree.split_feature[n] = column - first_feature_column;
    bool default_left = (type & kDefaultLeftBit) != 0;
    // Beyond float range a threshold sends every finite value one way (our
    // inputs are finite: readers and the server refuse infinities). Above,
    // FLT_MAX does the same; below, no float threshold sends every value
    // right, so the children swap sides under threshold FLT_MAX and the
    // missing side flips with them.
    const bool below_floats =
        t < DecimalValue(-std::numeric_limits<float>::max());
    tree.threshold[n] =
        below_floats ? std::numeric_limits<float>::max() : FloatThreshold(t);
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

// The largest float x whose decimal value LightGBM sends left (<= t). Both
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

// The double LightGBM reads from the text of float x: its shortest decimal
// form, as PLRank's LETOR writer prints it and as data files hold it
// ("0.98", not the float's exact binary value 0.98000001907...).
double DecimalValue(float x) {
  char text[32];
  const std::to_chars_result printed =
      std::to_chars(text, text + sizeof(text), x);
  double value = x;
  std::from_chars(text, printed.ptr, value);
  return value;
}

}  // namespace plrank::lightgbm_internal
