#ifndef PLRANK_CORE_MODEL_MODEL_JSON_H_
#define PLRANK_CORE_MODEL_MODEL_JSON_H_

#include <cstdint>
#include <string>

#include "core/model/ensemble.h"

namespace plrank {

// The model as one JSON document (plrank-eval --dump_format=json), the
// schema of docs/lightgbm-habits.md "JSON dump", version
// kModelJsonSchemaVersion. Features are numbered from 1 ("feature"), with
// "feature_name" when the model names them; trees are nested nodes as
// LightGBM's dump_model writes them; numbers are exact (doubles in
// shortest round-trip form, thresholds the float the scorer compares).
inline constexpr int32_t kModelJsonSchemaVersion = 1;
std::string DumpModelJson(const Ensemble& model);

}  // namespace plrank

#endif  // PLRANK_CORE_MODEL_MODEL_JSON_H_
