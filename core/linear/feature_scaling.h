#ifndef PLRANK_CORE_LINEAR_FEATURE_SCALING_H_
#define PLRANK_CORE_LINEAR_FEATURE_SCALING_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/data/dataset.h"

namespace plrank {

// Per-feature standardization the linear trainers optimize in, for
// conditioning: z_f = (x_f - mean_f) / stddev_f with NaN read as 0 (as the
// scorer does). Rankings only compare scores within a query, so the centering
// is a per-query constant that drops out; the trainers therefore never build
// z and score raw features with w_f = v_f / stddev_f instead (FoldToRaw).
// Constant features (stddev 0) are inactive: their weight stays 0.
struct FeatureScaling {
  std::vector<double> mean;
  std::vector<double> stddev;   // 1 for inactive features
  std::vector<uint8_t> active;  // 1 = the feature varies over the documents
  int32_t num_active = 0;

  // Raw-feature weights equivalent (up to a per-query constant) to the
  // standardized-space weights v.
  std::vector<double> FoldToRaw(absl::Span<const double> v) const;
};

// Mean and population standard deviation of every feature (two passes, in
// double, one feature per task: independent of the thread count).
FeatureScaling ComputeFeatureScaling(const Dataset& data);

}  // namespace plrank

#endif  // PLRANK_CORE_LINEAR_FEATURE_SCALING_H_
