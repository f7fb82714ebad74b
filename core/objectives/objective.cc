#include "core/objectives/objective.h"

#include <vector>

namespace plrank {

void Objective::ComputeLeafValues(absl::Span<const double> scores,
                                  const LeafAssignment& assignment,
                                  absl::Span<double> leaf_values) const {
  LeafValuesFromStatistics(LeafStatistics(scores, assignment), assignment,
                           leaf_values);
}

std::vector<double> Objective::LeafStatistics(
    absl::Span<const double> /*scores*/,
    const LeafAssignment& assignment) const {
  const size_t num_leaves = assignment.num_leaves;
  std::vector<double> statistics(2 * num_leaves, 0.0);
  double* sum_g = statistics.data();
  double* sum_h = statistics.data() + num_leaves;
  // Serial on purpose: document order fixes the summation order, so the
  // result does not depend on the thread count.
  for (size_t i = 0; i < assignment.leaf_of_document.size(); ++i) {
    const int32_t leaf = assignment.leaf_of_document[i];
    if (leaf < 0) continue;
    sum_g[leaf] += assignment.gradients[i];
    sum_h[leaf] += assignment.hessians[i];
  }
  return statistics;
}

void Objective::LeafValuesFromStatistics(absl::Span<const double> statistics,
                                         const LeafAssignment& assignment,
                                         absl::Span<double> leaf_values) const {
  const size_t num_leaves = assignment.num_leaves;
  for (size_t leaf = 0; leaf < num_leaves; ++leaf) {
    const double denominator =
        statistics[num_leaves + leaf] + assignment.lambda_l2;
    leaf_values[leaf] =
        denominator > 0.0 ? -statistics[leaf] / denominator : 0.0;
  }
}

}  // namespace plrank
