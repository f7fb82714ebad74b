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

absl::Status ListNetKlObjective::Init(const Dataset& train, uint64_t /*seed*/) {
  absl::StatusOr<QueryLabels> queries = QueryLabels::Build(train);
  if (!queries.ok()) return queries.status();
  queries_ = *std::move(queries);
  const size_t num_queries = queries_.num_queries();
  target_scale_.assign(num_queries, 0.0);
  skipped_queries_ = 0;
  for (size_t q = 0; q < num_queries; ++q) {
    double gain_sum = 0.0;
    for (uint32_t i = queries_.begin(q); i < queries_.offsets[q + 1]; ++i) {
      gain_sum += queries_.gains[i];
    }
    if (queries_.all_equal[q] || !(gain_sum > 0.0)) {
      ++skipped_queries_;
      continue;
    }
    target_scale_[q] = consistent_ ? 1.0 / queries_.ideal_dcg[q] : 1.0 / gain_sum;
  }
  return absl::OkStatus();
}

void ListNetKlObjective::QueryDerivatives(size_t q, const double* scores,
                                          double* gradients,
                                          double* hessians) const {
  const uint32_t n = queries_.size(q);
  const double scale = target_scale_[q];
  if (scale == 0.0) {
    std::fill(gradients, gradients + n, 0.0);
    std::fill(hessians, hessians + n, 0.0);
    return;
  }
  const double* gains = queries_.gains.data() + queries_.begin(q);
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

void ListNetKlObjective::ComputeGradients(
    absl::Span<const double> scores, absl::Span<const uint8_t> query_in_bag,
    absl::Span<float> gradients, absl::Span<float> hessians) {
  WriteQueryDerivatives(queries_, query_in_bag, gradients, hessians,
                        [&](size_t q, double* first, double* second) {
                          QueryDerivatives(q, scores.data() + queries_.begin(q),
                                           first, second);
                        });
}

double ListNetKlObjective::Loss(absl::Span<const double> scores) const {
  return SumOverQueries(queries_, [&](size_t q, QueryScratch& /*scratch*/) {
    const double scale = target_scale_[q];
    if (scale == 0.0) return 0.0;
    const uint32_t n = queries_.size(q);
    const double* s = scores.data() + queries_.begin(q);
    const double* gains = queries_.gains.data() + queries_.begin(q);
    const double log_normalizer = LogSumExp(s, n);
    double loss = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
      loss += gains[i] * scale * (log_normalizer - s[i]);
    }
    return loss;
  });
}

std::vector<std::string> ListNetKlObjective::Describe() const {
  return {absl::StrFormat(
      "%s: per-query ListNet top-1 cross entropy to %s; %d of %d queries "
      "skipped (all labels equal)",
      name(), consistent_ ? "G/Z" : "G/sum(G)", skipped_queries_,
      queries_.num_queries())};
}

}  // namespace plrank
