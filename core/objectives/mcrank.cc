#include "core/objectives/mcrank.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace plrank {

void McRankObjective::ClassProbabilities(absl::Span<const double> scores,
                                         size_t num_documents,
                                         int32_t num_classes, size_t document,
                                         double* probabilities) {
  double top = scores[document];
  for (int32_t k = 1; k < num_classes; ++k) {
    top = std::max(top, scores[k * num_documents + document]);
  }
  double sum = 0.0;
  for (int32_t k = 0; k < num_classes; ++k) {
    probabilities[k] = std::exp(scores[k * num_documents + document] - top);
    sum += probabilities[k];
  }
  for (int32_t k = 0; k < num_classes; ++k) probabilities[k] /= sum;
}

absl::Status McRankObjective::InitQueries(const Dataset& train,
                                          uint64_t /*seed*/) {
  const int32_t max_label = train.max_label();
  if (max_label + 1 > kMaxClasses) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "mcrank: %d classes (max label %d) exceed the limit of %d",
        max_label + 1, max_label, kMaxClasses));
  }
  num_classes_ = max_label + 1;
  hessian_factor_ =
      options_.friedman_factor && num_classes_ > 1
          ? static_cast<double>(num_classes_) / (num_classes_ - 1.0)
          : 1.0;
  return absl::OkStatus();
}

void McRankObjective::QueryDerivatives(size_t q, const double* scores,
                                       double* gradients, double* hessians,
                                       QueryScratch& scratch) const {
  const size_t num_documents = queries().num_documents();
  const uint32_t begin = queries().begin(q);
  const uint32_t n = queries().size(q);
  // ClassProbabilities indexes documents globally: scores[0] is document 0.
  const absl::Span<const double> all_scores(scores - begin,
                                            num_classes_ * num_documents);
  scratch.work.resize(num_classes_);
  double* p = scratch.work.data();
  for (uint32_t i = 0; i < n; ++i) {
    ClassProbabilities(all_scores, num_documents, num_classes_, begin + i, p);
    const int32_t label = queries().labels[begin + i];
    for (int32_t k = 0; k < num_classes_; ++k) {
      gradients[k * n + i] = p[k] - (k == label ? 1.0 : 0.0);
      hessians[k * n + i] = hessian_factor_ * p[k] * (1.0 - p[k]);
    }
  }
}

double McRankObjective::QueryLoss(size_t q, const double* scores,
                                  QueryScratch& /*scratch*/) const {
  const size_t num_documents = queries().num_documents();
  const int32_t* labels = queries().labels.data() + queries().begin(q);
  double loss = 0.0;
  for (uint32_t i = 0; i < queries().size(q); ++i) {
    double top = scores[i];
    for (int32_t k = 1; k < num_classes_; ++k) {
      top = std::max(top, scores[k * num_documents + i]);
    }
    double sum = 0.0;
    for (int32_t k = 0; k < num_classes_; ++k) {
      sum += std::exp(scores[k * num_documents + i] - top);
    }
    loss += top + std::log(sum) - scores[labels[i] * num_documents + i];
  }
  return loss;
}

std::vector<std::string> McRankObjective::Describe() const {
  return {absl::StrFormat(
      "mcrank: %d classes (one tree per class per iteration), softmax cross "
      "entropy, hessian factor %s; ranked by expected relevance",
      num_classes_, options_.friedman_factor ? "K/(K-1)" : "1")};
}

}  // namespace plrank
