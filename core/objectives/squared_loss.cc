#include "core/objectives/squared_loss.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace plrank {

std::string SquaredLossObjective::name() const {
  switch (target_) {
    case SquaredLossTarget::kGain:
      return "mart1";
    case SquaredLossTarget::kLabel:
      return "mart2";
    case SquaredLossTarget::kNormalizedGain:
      return "cmart1";
  }
  return "mart";
}

absl::Status SquaredLossObjective::Init(const Dataset& train, uint64_t /*seed*/) {
  absl::StatusOr<QueryLabels> queries = QueryLabels::Build(train);
  if (!queries.ok()) return queries.status();
  queries_ = *std::move(queries);
  targets_.assign(queries_.num_documents(), 0.0);
  for (size_t q = 0; q < queries_.num_queries(); ++q) {
    const double z = queries_.ideal_dcg[q];
    for (uint32_t i = queries_.begin(q); i < queries_.offsets[q + 1]; ++i) {
      switch (target_) {
        case SquaredLossTarget::kGain:
          targets_[i] = queries_.gains[i];
          break;
        case SquaredLossTarget::kLabel:
          targets_[i] = queries_.labels[i];
          break;
        case SquaredLossTarget::kNormalizedGain:
          targets_[i] = z > 0.0 ? queries_.gains[i] / z : 0.0;
          break;
      }
    }
  }
  return absl::OkStatus();
}

void SquaredLossObjective::ComputeGradients(
    absl::Span<const double> scores, absl::Span<const uint8_t> query_in_bag,
    absl::Span<float> gradients, absl::Span<float> hessians) {
  ForEachQuery(queries_, [&](size_t q, QueryScratch& /*scratch*/) {
    const uint32_t begin = queries_.begin(q);
    const uint32_t end = queries_.offsets[q + 1];
    if (!QueryInBag(query_in_bag, q)) {
      std::fill(gradients.begin() + begin, gradients.begin() + end, 0.0f);
      std::fill(hessians.begin() + begin, hessians.begin() + end, 0.0f);
      return;
    }
    for (uint32_t i = begin; i < end; ++i) {
      gradients[i] = static_cast<float>(scores[i] - targets_[i]);
      hessians[i] = 1.0f;
    }
  });
}

double SquaredLossObjective::Loss(absl::Span<const double> scores) const {
  return SumOverQueries(queries_, [&](size_t q, QueryScratch& /*scratch*/) {
    double loss = 0.0;
    for (uint32_t i = queries_.begin(q); i < queries_.offsets[q + 1]; ++i) {
      const double residual = scores[i] - targets_[i];
      loss += 0.5 * residual * residual;
    }
    return loss;
  });
}

std::vector<std::string> SquaredLossObjective::Describe() const {
  const char* target = target_ == SquaredLossTarget::kGain    ? "2^r - 1"
                       : target_ == SquaredLossTarget::kLabel ? "r"
                                                              : "(2^r - 1) / IDCG";
  return {absl::StrFormat("%s: pointwise squared loss to %s over %d queries",
                          name(), target, queries_.num_queries())};
}

}  // namespace plrank
