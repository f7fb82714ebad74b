#include "core/linear/feature_scaling.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/linear/linear_model.h"

namespace plrank {

std::vector<double> FeatureScaling::FoldToRaw(
    absl::Span<const double> v) const {
  std::vector<double> raw(v.size(), 0.0);
  for (size_t f = 0; f < v.size(); ++f) {
    if (f < active.size() && active[f]) raw[f] = v[f] / stddev[f];
  }
  return raw;
}

FeatureScaling ComputeFeatureScaling(const Dataset& data) {
  const int32_t m = data.num_features;
  const size_t n = data.num_documents();
  FeatureScaling scaling;
  scaling.mean.assign(m, 0.0);
  scaling.stddev.assign(m, 1.0);
  scaling.active.assign(m, 0);
  if (n == 0) return scaling;
#pragma omp parallel for schedule( \
    dynamic, 1) if (static_cast <int64_t>(n) >= kLinearParallelMinDocuments)
  for (int32_t f = 0; f < m; ++f) {
    const float* column = data.column(f);
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) {
      if (!std::isnan(column[i])) sum += column[i];
    }
    const double mean = sum / static_cast<double>(n);
    double squares = 0.0;
    for (size_t i = 0; i < n; ++i) {
      const double x = std::isnan(column[i]) ? 0.0 : column[i];
      squares += (x - mean) * (x - mean);
    }
    const double stddev = std::sqrt(squares / static_cast<double>(n));
    scaling.mean[f] = mean;
    // Relative threshold: a column that only differs by rounding noise is
    // constant for ranking purposes and would blow up 1 / stddev.
    if (std::isfinite(stddev) &&
        stddev > 1e-12 * std::max(1.0, std::fabs(mean))) {
      scaling.stddev[f] = stddev;
      scaling.active[f] = 1;
    }
  }
  for (uint8_t a : scaling.active) scaling.num_active += a;
  return scaling;
}

}  // namespace plrank
