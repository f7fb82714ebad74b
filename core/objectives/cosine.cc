#include "core/objectives/cosine.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace plrank {

absl::Status CosineObjective::InitQueries(const Dataset& /*train*/,
                                          uint64_t /*seed*/) {
  const size_t num_queries = queries().num_queries();
  target_scale_.assign(num_queries, 0.0);
  target_norm_.assign(num_queries, 0.0);
  skipped_queries_ = 0;
  for (size_t q = 0; q < num_queries; ++q) {
    double squared_norm = 0.0;
    for (uint32_t i = queries().begin(q); i < queries().offsets[q + 1]; ++i) {
      squared_norm += queries().gains[i] * queries().gains[i];
    }
    const double gain_norm = std::sqrt(squared_norm);
    // Not all equal implies some gain > 0, so both normalizers are > 0.
    if (queries().all_equal[q] || !(gain_norm > 0.0)) {
      ++skipped_queries_;
      continue;
    }
    target_scale_[q] =
        consistent_ ? 1.0 / queries().ideal_dcg[q] : 1.0 / gain_norm;
    target_norm_[q] = gain_norm * target_scale_[q];
  }
  return absl::OkStatus();
}

void CosineObjective::QueryDerivatives(size_t q, const double* scores,
                                       double* gradients, double* hessians,
                                       QueryScratch& /*scratch*/) const {
  const uint32_t n = queries().size(q);
  const double scale = target_scale_[q];
  if (scale == 0.0) {
    std::fill(gradients, gradients + n, 0.0);
    std::fill(hessians, hessians + n, 0.0);
    return;
  }
  const double* gains = queries().gains.data() + queries().begin(q);
  double squared_norm = 0.0;
  double dot = 0.0;
  for (uint32_t i = 0; i < n; ++i) {
    squared_norm += scores[i] * scores[i];
    dot += scores[i] * gains[i] * scale;
  }
  const double norm = std::sqrt(squared_norm);
  if (norm < kZeroNorm) {
    for (uint32_t i = 0; i < n; ++i) {
      gradients[i] = -gains[i] * scale;
      hessians[i] = target_norm_[q];
    }
    return;
  }
  const double inverse_norm = 1.0 / norm;
  const double radial = dot * inverse_norm * inverse_norm * inverse_norm;
  const double curvature = target_norm_[q] * inverse_norm * inverse_norm;
  for (uint32_t i = 0; i < n; ++i) {
    gradients[i] = -gains[i] * scale * inverse_norm + radial * scores[i];
    hessians[i] = curvature;
  }
}

double CosineObjective::QueryLoss(size_t q, const double* scores,
                                  QueryScratch& /*scratch*/) const {
  const double scale = target_scale_[q];
  if (scale == 0.0) return 0.0;
  const double* gains = queries().gains.data() + queries().begin(q);
  double squared_norm = 0.0;
  double dot = 0.0;
  for (uint32_t i = 0; i < queries().size(q); ++i) {
    squared_norm += scores[i] * scores[i];
    dot += scores[i] * gains[i] * scale;
  }
  const double norm = std::sqrt(squared_norm);
  return norm < kZeroNorm ? 1.0 : 1.0 - dot / norm;
}

std::vector<std::string> CosineObjective::Describe() const {
  return {absl::StrFormat(
      "%s: per-query 1 - cos(s, %s); %d of %d queries skipped (all labels "
      "equal)",
      name(), consistent_ ? "G/Z" : "G", skipped_queries_,
      queries().num_queries())};
}

}  // namespace plrank
