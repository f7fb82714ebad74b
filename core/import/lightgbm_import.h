#ifndef PLRANK_CORE_IMPORT_LIGHTGBM_IMPORT_H_
#define PLRANK_CORE_IMPORT_LIGHTGBM_IMPORT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/model/ensemble.h"

namespace plrank {

struct LightgbmImportOptions {
  // The LightGBM column that becomes our feature 0 (index 1 in LETOR files,
  // 0 in Rank requests); column c becomes feature c - first_feature_column.
  // 1 (the default) for models trained on LETOR / LightGBM-form text files:
  // LightGBM keeps their 1-based indices as column numbers, so its column 0
  // is always empty. 0 for models trained on a matrix whose column 0 is a
  // feature. A split on a column below it is an error.
  int32_t first_feature_column = 1;
};

// Imports a model saved by LightGBM 2.x-4.x in its text format
// (Booster.save_model("m.txt"), the CLI's output_model), so ForestScorer
// serves it and reproduces LightGBM's raw score (predict(raw_score=True)):
// both sum the same double leaf values in tree order, and every split sends
// a value where LightGBM sends it (below).
//
// Supported: single-output models (num_class 1, one tree per iteration) of
// any objective, with numerical splits of every missing type. Refused with
// kUnimplemented and a message saying why: linear trees (linear_tree=true),
// categorical splits, multi-class models, random-forest averaging
// (average_output). Any malformed input is kInvalidArgument; no exception
// escapes and nothing aborts. Every count is checked against the entries the
// file actually holds, and errors name the file and line.
//
// Mapping, node for node (LightGBM numbers nodes and leaves as we do):
//   - LightGBM sends x left when x <= threshold, comparing the double it
//     parsed from the input's text; PLRank holds inputs as floats. We store
//     the largest float whose shortest decimal text (what PLRank writes, and
//     what data files hold: "0.98") LightGBM sends left, so every input of
//     up to 6 significant digits goes exactly where LightGBM sends it. A
//     value with more digits than a float holds can differ only when it lies
//     within a float rounding step of the threshold. A threshold beyond
//     float range (LightGBM writes "inf" for "every value left") sends every
//     finite value one way; PLRank's inputs are finite (readers and the
//     server refuse infinities).
//   - Missing type None: NaN is treated as 0, so default_left = (0 <= t).
//     NaN: NaN goes to LightGBM's default side. Zero: NaN and every x with
//     |x| <= 1e-35f (LightGBM's kZeroThreshold) go to the default side:
//     Tree::zero_as_missing is set on such nodes, which makes the artifact
//     format version 2.
//   - Leaf values are copied: LightGBM saves them with the shrinkage applied
//     and with the init score (boost_from_average) already added to the
//     first iteration's leaves, so the base score is 0. Split gains and leaf
//     counts are copied for dumps and feature importance.
//   - objective = "lightgbm:" + LightGBM's objective name; parameters
//     record the source ("lightgbm v4"), the full objective line and the
//     column mapping; feature names are copied from first_feature_column on.
//     Model files store text as UTF-8: a feature name or objective with
//     other bytes is refused (ValidateEnsemble), not written unreadable.
absl::StatusOr<Ensemble> ImportLightgbmModel(
    std::string_view text, const std::string& name_for_errors,
    const LightgbmImportOptions& options = {});

// Reads `path` and imports it as above; errors start with the path.
absl::StatusOr<Ensemble> ImportLightgbmModelFile(
    const std::string& path, const LightgbmImportOptions& options = {});

}  // namespace plrank

#endif  // PLRANK_CORE_IMPORT_LIGHTGBM_IMPORT_H_
