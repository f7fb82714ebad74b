#include "core/model/feature_importance.h"

#include <algorithm>
#include <cstddef>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

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

bool HasSplitGains(const Ensemble& model) {
  return std::all_of(model.trees.begin(), model.trees.end(),
                     [](const Tree& tree) {
                       return tree.split_gain.size() ==
                              tree.split_feature.size();
                     });
}

std::string FormatFeatureImportance(const Ensemble& model) {
  const std::vector<double> splits = FeatureImportance(model, false);
  const bool has_gain = HasSplitGains(model);
  const std::vector<double> gains = FeatureImportance(model, true);
  const double total_splits =
      std::accumulate(splits.begin(), splits.end(), 0.0);
  const auto used = std::count_if(splits.begin(), splits.end(),
                                  [](double count) { return count > 0; });
  std::string out = absl::StrFormat(
      "# feature importance: %d of %d features split on, %d splits in %d "
      "trees\n",
      used, model.num_features, static_cast<int64_t>(total_splits),
      model.trees.size());
  if (!has_gain) {
    absl::StrAppend(&out,
                    "# gain: unavailable (the model records no split gains); "
                    "sorted by splits\n");
  }
  if (model.trees.empty() && !model.linear_weights.empty()) {
    absl::StrAppend(&out,
                    "# linear model: no splits (its weights are in --dump)\n");
  }
  std::vector<int32_t> order(splits.size());
  std::iota(order.begin(), order.end(), 0);
  const std::vector<double>& key = has_gain ? gains : splits;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (key[a] != key[b]) return key[a] > key[b];
    return splits[a] > splits[b];
  });
  absl::StrAppend(&out, "feature\tgain\tsplits\tname\n");
  for (int32_t f : order) {
    const std::string name =
        static_cast<size_t>(f) < model.feature_names.size() &&
                !model.feature_names[f].empty()
            ? model.feature_names[f]
            : "-";
    absl::StrAppend(&out, f + 1, "\t",
                    has_gain ? absl::StrFormat("%.6g", gains[f]) : "-", "\t",
                    static_cast<int64_t>(splits[f]), "\t", name, "\n");
  }
  return out;
}

}  // namespace plrank
