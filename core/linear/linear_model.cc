#include "core/linear/linear_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/metrics/ranking_metrics.h"

namespace plrank {

std::vector<double> ScoreLinear(const Dataset& data,
                                absl::Span<const double> weights) {
  const int64_t n = static_cast<int64_t>(data.num_documents());
  std::vector<double> scores(n, 0.0);
  const int32_t features = std::min<int32_t>(
      data.num_features, static_cast<int32_t>(weights.size()));
  // Feature-outer loop over fixed document blocks: every document adds its
  // terms in feature order whatever the thread count.
  constexpr int64_t kBlock = 4096;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (n >= kLinearParallelMinDocuments)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t begin = b * kBlock;
    const int64_t end = std::min(n, begin + kBlock);
    for (int32_t f = 0; f < features; ++f) {
      const double w = weights[f];
      if (w == 0.0) continue;
      const float* column = data.column(f);
      for (int64_t i = begin; i < end; ++i) {
        const float x = column[i];
        if (!std::isnan(x)) scores[i] += w * x;
      }
    }
  }
  return scores;
}

double MeanNdcg(const Dataset& data, absl::Span<const double> scores,
                int32_t k) {
  MetricSpec spec;
  spec.kind = MetricSpec::Kind::kNdcg;
  spec.k = k;
  return MeanIgnoringNan(PerQueryMetric(data, scores, spec, MetricOptions()));
}

}  // namespace plrank
