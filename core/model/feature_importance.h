#ifndef PLRANK_CORE_MODEL_FEATURE_IMPORTANCE_H_
#define PLRANK_CORE_MODEL_FEATURE_IMPORTANCE_H_

#include <vector>

#include "core/model/ensemble.h"

namespace plrank {

// Importance of each feature (num_features entries): the number of splits on
// it, or with `by_gain` the sum of those splits' gains (trees without recorded
// gains contribute nothing then). Splits on features >= num_features are
// ignored; run ValidateEnsemble first to rule them out.
std::vector<double> FeatureImportance(const Ensemble& model, bool by_gain);

}  // namespace plrank

#endif  // PLRANK_CORE_MODEL_FEATURE_IMPORTANCE_H_
