#ifndef PLRANK_CORE_IMPORT_LIGHTGBM_TREE_H_
#define PLRANK_CORE_IMPORT_LIGHTGBM_TREE_H_

// Internal to the LightGBM import: one "Tree=" block of a LightGBM text
// model to one PLRank Tree (the mapping is documented in lightgbm_import.h).

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/model/ensemble.h"
#include "core/import/lightgbm_text.h"

namespace plrank::lightgbm_internal {

// Converts the tree block `fields`, whose "Tree=" line is `line`, of a model
// with `num_columns` columns; column c becomes feature c -
// first_feature_column. Unsupported trees (linear, categorical) are
// kUnimplemented, malformed ones kInvalidArgument, naming the line.
absl::StatusOr<Tree> ConvertTree(const Fields& fields, int line,
                                 int32_t num_columns,
                                 int32_t first_feature_column,
                                 const Errors& errors);

// The float threshold that sends every float input where LightGBM sends
// its shortest decimal text under double threshold t (t must not be below
// every float's decimal value; see lightgbm_import.h).
float FloatThreshold(double t);

// The double LightGBM reads from the text of float x: its shortest decimal
// form, as data files hold it ("0.98", not 0.98000001907...).
// FloatThreshold(DecimalValue(x)) == x.
double DecimalValue(float x);

}  // namespace plrank::lightgbm_internal

#endif  // PLRANK_CORE_IMPORT_LIGHTGBM_TREE_H_
