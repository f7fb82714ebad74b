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

absl::Status SquaredLossObjective::InitQueries(const Dataset& /*train*/,
                                               uint64_t /*seed*/) {
  const QueryLabels& labels = queries();
  targets_.assign(labels.num_documents(), 0.0);
  for (size_t q = 0; q < labels.num_queries(); ++q) {
    const double z = labels.ideal_dcg[q];
    for (uint32_t i = labels.begin(q); i < labels.offsets[q + 1]; ++i) {
      switch (target_) {
        case SquaredLossTarget::kGain:
          targets_[i] = labels.gains[i];
          break;
        case SquaredLossTarget::kLabel:
          targets_[i] = labels.labels[i];
          break;
        case SquaredLossTarget::kNormalizedGain:
          targets_[i] = z > 0.0 ? labels.gains[i] / z : 0.0;
          break;
      }
    }
  }
  return absl::OkStatus();
}

void SquaredLossObjective::QueryDerivatives(size_t q, const double* scores,
                                            double* gradients, double* hessians,
                                            QueryScratch& /*scratch*/) const {
  const double* targets = targets_.data() + queries().begin(q);
  if (!training_weights().empty()) {
    const double wq = query_weight(q);
    for (uint32_t i = 0; i < queries().size(q); ++i) {
      const double w = wq * document_weight(queries().begin(q) + i);
      gradients[i] = w * (scores[i] - targets[i]);
      hessians[i] = w;
    }
    return;
  }
  for (uint32_t i = 0; i < queries().size(q); ++i) {
    gradients[i] = scores[i] - targets[i];
    hessians[i] = 1.0;
  }
}

double SquaredLossObjective::QueryLoss(size_t q, const double* scores,
                                       QueryScratch& /*scratch*/) const {
  const double* targets = targets_.data() + queries().begin(q);
  double loss = 0.0;
  for (uint32_t i = 0; i < queries().size(q); ++i) {
    const double residual = scores[i] - targets[i];
    if (training_weights().empty()) {
      loss += 0.5 * residual * residual;
    } else {
      loss += 0.5 * query_weight(q) * document_weight(queries().begin(q) + i) *
              residual * residual;
    }
  }
  return loss;
}

std::vector<std::string> SquaredLossObjective::Describe() const {
  const char* target = target_ == SquaredLossTarget::kGain    ? "2^r - 1"
                       : target_ == SquaredLossTarget::kLabel ? "r"
                                                              : "(2^r - 1) / IDCG";
  return {absl::StrFormat("%s: pointwise squared loss to %s over %d queries",
                          name(), target, queries().num_queries())};
}

}  // namespace plrank
