#ifndef PLRANK_CORE_IMPORT_XGBOOST_IMPORT_H_
#define PLRANK_CORE_IMPORT_XGBOOST_IMPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/model/ensemble.h"

namespace plrank {

// Imports a model saved by XGBoost 1.7 in its JSON format
// (Booster.save_model("m.json") / XGBoosterSaveModel with a .json name) or
// its Universal Binary JSON format (save_model("m.ubj"); told apart by the
// bytes, see ParseXgboostDocument), so
// ForestScorer serves it and reproduces XGBoost's margin output
// (predict(output_margin=True)) up to float rounding: XGBoost sums in float,
// the scorer in double.
//
// Supported: booster "gbtree" (num_parallel_tree >= 1: all trees are summed)
// with a single-output objective: rank:pairwise, rank:ndcg, rank:map and
// reg:squarederror, reg:squaredlogerror, reg:pseudohubererror,
// reg:absoluteerror (base margin = base_score), reg:logistic (logit of
// base_score), reg:gamma, reg:tweedie (log of base_score). Anything else
// (dart, gblinear, multi-class or multi-target models, categorical splits,
// the binary format of before 1.6) is an InvalidArgument/Unimplemented
// error; no exception escapes.
//
// Mapping: XGBoost sends x left when x < split_condition; the Ensemble when
// x <= threshold, so threshold = nextafter(split_condition, -inf) as floats
// (the same partition of every float). Missing values follow default_left.
// Leaves take split_conditions[leaf] (XGBoost's leaf value), gains take
// loss_changes, leaf covers take sum_hessian when the file has it (XGBoost
// keeps hessian sums, not counts, so leaf counts stay empty; Explain then
// weighs as XGBoost's own TreeSHAP does). Nodes are renumbered by a walk from
// the root, so pruned (deleted) nodes are dropped. objective = "xgboost:" +
// XGBoost's objective name; parameters["source"] = "xgboost <version>";
// feature_names are copied when the model has them (text that is not UTF-8 is
// refused: model files store text as UTF-8).
absl::StatusOr<Ensemble> ImportXgboostJsonModel(const std::string& json_text);

// Reads `path` and imports it as above.
absl::StatusOr<Ensemble> ImportXgboostJsonFile(const std::string& path);

}  // namespace plrank

#endif  // PLRANK_CORE_IMPORT_XGBOOST_IMPORT_H_
