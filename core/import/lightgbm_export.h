#ifndef PLRANK_CORE_IMPORT_LIGHTGBM_EXPORT_H_
#define PLRANK_CORE_IMPORT_LIGHTGBM_EXPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/model/ensemble.h"

namespace plrank {

// The model in LightGBM's text model format (what Booster.save_model
// writes and lightgbm.Booster(model_file=...) and the `lightgbm` CLI's
// input_model read), for the tree models LightGBM can express:
// plrank-convert --to_lightgbm=model.txt (docs/lightgbm-habits.md).
//
// Exact: ImportLightgbmModel (core/import/lightgbm_import.h) of the text,
// with its default options, scores every input bit for bit as the model
// does, and LightGBM's predict(raw_score=True) gives the same scores:
//   - feature f (0-based here, LETOR feature f + 1) is LightGBM column
//     f + 1, as LightGBM numbers the columns of LETOR files (column 0 is
//     empty, named Column_0); names are the model's (spaces and JSON
//     punctuation replaced by '_') or Column_<f + 1>;
//   - a split on x <= t (t a float) gets the double threshold of t's
//     shortest decimal text, which the import maps back to t and which
//     sends every value of a data file where PLRank sends it;
//   - missing values: a node that treats zero as missing is LightGBM's
//     missing type Zero, every other node missing type NaN, with the same
//     default side;
//   - the base score is added to the first tree's leaves (LightGBM has no
//     base score; its own boost_from_average does the same), and a model
//     without trees becomes one single-leaf tree.
// Refused with kUnimplemented and the reason: several outputs or a
// non-identity score transform (LightGBM's multiclass softmax is not the
// expected-relevance transform), a linear part (LightGBM's linear trees are
// per leaf). InvalidArgument when the model fails ValidateEnsemble.
absl::StatusOr<std::string> ExportLightgbmModel(const Ensemble& model);

}  // namespace plrank

#endif  // PLRANK_CORE_IMPORT_LIGHTGBM_EXPORT_H_
