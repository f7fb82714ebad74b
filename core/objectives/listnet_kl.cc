#include "core/objectives/listnet_kl.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace plrank {
namespace {

// log sum_i exp(s_i), shifted by the maximum so nothing overflows.
double LogSumExp(const double* scores, uint32_t n) {
  const double top = *std::max_element(scores, scores + n);
  double sum = 0.0;
  for (uint32_t i = 0; i < n; ++i) sum += std::exp(scores[i] - top);
  return top + std::log(sum);
}

}  // namespace

absl::Status ListNetKlObjective::InitQueries(const Dataset& /*train*/,
                                             uint64_t /*seed*/) {
  const size_t num_queries = queries().num_queries();
  target_scale_.assign(num_queries, 0.0);
  skipped_queries_ = 0;
  for (size_t q = 0; q < num_queries; ++q) {
    double gain_sum = 0.0;
    for (uint32_t i = queries().begin(q); i < queries().offsets[q + 1]; ++i) {
      gain_sum += queries().gains[i];
    }
    if (queries().all_equal[q] || !(gain_sum > 0.0)) {
      ++skipped_queries_;
      continue;
    }
    target_scale_[q] =
        consistent_ ? 1.0 / queries().ideal_dcg[q] : 1.0 / gain_sum;
  }
  return absl::OkStatus();
}

void ListNetKlObjective::QueryDerivatives(size_t q, const double* scores,
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
  double target_sum = 0.0;
  for (uint32_t i = 0; i < n; ++i) target_sum += gains[i] * scale;
  // Softmax with one exp per document: the unnormalized values go to
  // `hessians` first, then are overwritten.
  const double top = *std::max_element(scores, scores + n);
  double normalizer = 0.0;
  for (uint32_t i = 0; i < n; ++i) {
    hessians[i] = std::exp(scores[i] - top);
    normalizer += hessians[i];
  }
  const double inverse_normalizer = 1.0 / normalizer;
  for (uint32_t i = 0; i < n; ++i) {
    const double p = hessians[i] * inverse_normalizer;
    gradients[i] = target_sum * p - gains[i] * scale;
    hessians[i] = target_sum * p * (1.0 - p);
  }
}

double ListNetKlObjective::QueryLoss(size_t q, const double* scores,
                                     QueryScratch& /*scratch*/) const {
  const double scale = target_scale_[q];
  if (scale == 0.0) return 0.0;
  const uint32_t n = queries().size(q);
  const double* s = scores;
  const double* gains = queries().gains.data() + queries().begin(q);
  const double log_normalizer = LogSumExp(s, n);
  double loss = 0.0;
  for (uint32_t i = 0; i < n; ++i) {
    loss += gains[i] * scale * (log_normalizer - s[i]);
  }
  return loss;
}

std::vector<std::string> ListNetKlObjective::Describe() const {
  return {absl::StrFormat(
      "%s: per-query ListNet top-1 cross entropy to %s; %d of %d queries "
      "skipped (all labels equal)",
      name(), consistent_ ? "G/Z" : "G/sum(G)", skipped_queries_,
      queries().num_queries())};
}

}  // namespace plrank
