#ifndef PLRANK_TESTS_TESTING_BOOSTING_TEST_UTIL_H_
#define PLRANK_TESTS_TESTING_BOOSTING_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/boosting/sampling.h"
#include "core/data/dataset.h"
#include "core/model/ensemble.h"
#include "core/objectives/objective.h"

namespace plrank::testing {

// Squared loss with num_outputs outputs; output k fits Target(k, label).
// Records what the booster handed it, for the tests to inspect.
class SquaredLoss : public Objective {
 public:
  explicit SquaredLoss(int32_t num_outputs = 1) : num_outputs_(num_outputs) {}

  static double Target(int32_t output, int32_t label) {
    return output == 0 ? label : 3.0 - 2.0 * label;
  }

  std::string name() const override { return "squared"; }
  int32_t num_outputs() const override { return num_outputs_; }
  absl::Status Init(const Dataset& train, uint64_t) override {
    train_ = &train;
    return absl::OkStatus();
  }
  void ComputeGradients(absl::Span<const double> scores,
                        absl::Span<const uint8_t> query_in_bag,
                        absl::Span<float> gradients,
                        absl::Span<float> hessians) override {
    last_query_in_bag.assign(query_in_bag.begin(), query_in_bag.end());
    const size_t n = train_->num_documents();
    for (int32_t k = 0; k < num_outputs_; ++k) {
      for (size_t q = 0; q < train_->num_queries(); ++q) {
        const bool in = query_in_bag.empty() || query_in_bag[q];
        for (uint32_t i = train_->query_begin(q); i < train_->query_end(q); ++i) {
          const size_t at = k * n + i;
          gradients[at] =
              in ? static_cast<float>(scores[at] - Target(k, train_->labels[i])) : 0.f;
          hessians[at] = in ? 1.0f : 0.0f;
        }
      }
    }
  }
  std::vector<double> LeafStatistics(
      absl::Span<const double> scores,
      const LeafAssignment& assignment) const override {
    last_leaf_of_document.assign(assignment.leaf_of_document.begin(),
                                 assignment.leaf_of_document.end());
    return Objective::LeafStatistics(scores, assignment);
  }
  double Loss(absl::Span<const double> scores) const override {
    const size_t n = train_->num_documents();
    double loss = 0.0;
    for (int32_t k = 0; k < num_outputs_; ++k) {
      for (size_t i = 0; i < n; ++i) {
        const double d = scores[k * n + i] - Target(k, train_->labels[i]);
        loss += 0.5 * d * d;
      }
    }
    return loss;
  }

  std::vector<uint8_t> last_query_in_bag;
  mutable std::vector<int32_t> last_leaf_of_document;

 private:
  int32_t num_outputs_;
  const Dataset* train_ = nullptr;
};

// A dataset from columns (one vector per feature), in queries of query_size.
inline Dataset MakeDataset(const std::vector<std::vector<float>>& columns,
                           const std::vector<int32_t>& labels,
                           size_t query_size = 10) {
  Dataset data;
  data.num_features = static_cast<int32_t>(columns.size());
  for (const auto& column : columns) {
    data.features.insert(data.features.end(), column.begin(), column.end());
  }
  data.labels = labels;
  for (size_t begin = 0; begin < labels.size(); begin += query_size) {
    data.query_offsets.push_back(static_cast<uint32_t>(begin));
    data.query_ids.push_back(std::to_string(data.query_ids.size()));
  }
  data.query_offsets.push_back(static_cast<uint32_t>(labels.size()));
  return data;
}

// Random features (some with NaNs, some discrete) and a label depending on a
// few of them.
inline Dataset RandomDataset(size_t num_documents, int32_t num_features,
                             uint64_t seed, size_t query_size = 20) {
  SplitMix64 rng(seed);
  auto uniform = [&rng] { return (rng.Next() >> 11) * 0x1.0p-53; };
  std::vector<std::vector<float>> columns(num_features);
  for (int32_t f = 0; f < num_features; ++f) {
    for (size_t i = 0; i < num_documents; ++i) {
      const double u = uniform();
      float x = static_cast<float>(u * 100.0);
      if (f % 3 == 1) x = std::floor(x / 10.0f);                 // 10 values
      if (f % 5 == 2 && uniform() < 0.1) x = std::nanf("");      // missing
      columns[f].push_back(x);
    }
  }
  std::vector<int32_t> labels;
  for (size_t i = 0; i < num_documents; ++i) {
    double r = columns[0][i] / 25.0 + (columns[1 % num_features][i] > 5 ? 1 : 0);
    if (std::isnan(r)) r = 2.0;
    r += uniform();
    labels.push_back(static_cast<int32_t>(std::min(4.0, std::floor(r))));
  }
  return MakeDataset(columns, labels, query_size);
}

// Routes raw float values as the scorer does: left iff x <= threshold, NaN
// left iff default_left.
inline int32_t LeafOf(const Tree& tree, const Dataset& data, size_t document) {
  if (tree.num_internal_nodes() == 0) return 0;
  int32_t node = 0;
  while (node >= 0) {
    const float x = data.value(document, tree.split_feature[node]);
    const bool left = std::isnan(x) ? tree.default_left[node] != 0
                                    : x <= tree.threshold[node];
    node = left ? tree.left_child[node] : tree.right_child[node];
  }
  return ~node;
}

// Scores of every output, out-major, summing trees in order.
inline std::vector<double> Predict(const std::vector<Tree>& trees,
                                   int32_t num_outputs, const Dataset& data) {
  const size_t n = data.num_documents();
  std::vector<double> scores(n * num_outputs, 0.0);
  for (size_t t = 0; t < trees.size(); ++t) {
    const int32_t k = static_cast<int32_t>(t % num_outputs);
    for (size_t i = 0; i < n; ++i) {
      scores[k * n + i] += trees[t].leaf_value[LeafOf(trees[t], data, i)];
    }
  }
  return scores;
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_BOOSTING_TEST_UTIL_H_
