#include "core/model/feature_importance.h"

#include <cstddef>

namespace plrank {

std::vector<double> FeatureImportance(const Ensemble& model, bool by_gain) {
  std::vector<double> importance(
      model.num_features > 0 ? static_cast<size_t>(model.num_features) : 0,
      0.0);
  for (const Tree& tree : model.trees) {
    const bool has_gain = tree.split_gain.size() == tree.split_feature.size();
    for (size_t n = 0; n < tree.split_feature.size(); ++n) {
      const int32_t feature = tree.split_feature[n];
      if (feature < 0 || feature >= model.num_features) continue;
      if (!by_gain) {
        importance[feature] += 1.0;
      } else if (has_gain) {
        importance[feature] += tree.split_gain[n];
      }
    }
  }
  return importance;
}

}  // namespace plrank
