#include "core/objectives/objective.h"

#include <vector>

namespace plrank {

void Objective::ComputeLeafValues(absl::Span<const double> /*scores*/,
                                  const LeafAssignment& assignment,
                                  absl::Span<double> leaf_values) const {
  std::vector<double> sum_g(assignment.num_leaves, 0.0);
  std::vector<double> sum_h(assignment.num_leaves, 0.0);
  // Serial on purpose: document order fixes the summation order, so the
  // result does not depend on the thread count.
  for (size_t i = 0; i < assignment.leaf_of_document.size(); ++i) {
    const int32_t leaf = assignment.leaf_of_document[i];
    if (leaf < 0) continue;
    sum_g[leaf] += assignment.gradients[i];
    sum_h[leaf] += assignment.hessians[i];
  }
  for (int32_t leaf = 0; leaf < assignment.num_leaves; ++leaf) {
    const double denominator = sum_h[leaf] + assignment.lambda_l2;
    leaf_values[leaf] = denominator > 0.0 ? -sum_g[leaf] / denominator : 0.0;
  }
}

}  // namespace plrank
