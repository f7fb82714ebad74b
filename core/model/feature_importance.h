#ifndef PLRANK_CORE_MODEL_FEATURE_IMPORTANCE_H_
#define PLRANK_CORE_MODEL_FEATURE_IMPORTANCE_H_

#include <string>
#include <vector>

#include "core/model/ensemble.h"

namespace plrank {

// Importance of each feature (num_features entries): the number of splits on
// it, or with `by_gain` the sum of those splits' gains (trees without recorded
// gains contribute nothing then). Splits on features >= num_features are
// ignored; run ValidateEnsemble first to rule them out.
std::vector<double> FeatureImportance(const Ensemble& model, bool by_gain);

// True when every tree with a split records the gain of each split (models
// trained here and LightGBM imports do; XGBoost JSON may not).
bool HasSplitGains(const Ensemble& model);

// What `plrank-eval --importance` prints: '#' comment lines (a summary, and
// why gain is missing when it is), then a header and one tab-separated line
// per feature, every feature of the model:
//   feature<TAB>gain<TAB>splits<TAB>name
// feature is the 1-based LETOR index, gain the summed split gain ("-" when
// the model has none, see HasSplitGains), splits the split count, name the
// model's feature name or "-". Lines are sorted by gain (by splits when gain
// is missing), largest first, then by feature.
std::string FormatFeatureImportance(const Ensemble& model);

}  // namespace plrank

#endif  // PLRANK_CORE_MODEL_FEATURE_IMPORTANCE_H_
