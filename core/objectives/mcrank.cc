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

absl::Status McRankObjective::Init(const Dataset& train, uint64_t /*seed*/) {
  absl::StatusOr<QueryLabels> queries = QueryLabels::Build(train);
  if (!queries.ok()) return queries.status();
  const int32_t max_label = train.max_label();
  if (max_label + 1 > kMaxClasses) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "mcrank: %d classes (max label %d) exceed the limit of %d",
        max_label + 1, max_label, kMaxClasses));
  }
  queries_ = *std::move(queries);
  num_classes_ = max_label + 1;
  return absl::OkStatus();
}

void McRankObjective::ComputeGradients(absl::Span<const double> scores,
                                       absl::Span<const uint8_t> query_in_bag,
                                       absl::Span<float> gradients,
                                       absl::Span<float> hessians) {
  const size_t num_documents = queries_.num_documents();
  const int32_t num_classes = num_classes_;
  const double factor =
      options_.friedman_factor && num_classes > 1
          ? static_cast<double>(num_classes) / (num_classes - 1.0)
          : 1.0;
  ForEachQuery(queries_, [&](size_t q, QueryScratch& scratch) {
    const uint32_t begin = queries_.begin(q);
    const uint32_t end = queries_.offsets[q + 1];
    if (!QueryInBag(query_in_bag, q)) {
      for (int32_t k = 0; k < num_classes; ++k) {
        std::fill(gradients.begin() + k * num_documents + begin,
                  gradients.begin() + k * num_documents + end, 0.0f);
        std::fill(hessians.begin() + k * num_documents + begin,
                  hessians.begin() + k * num_documents + end, 0.0f);
      }
      return;
    }
    scratch.first.resize(num_classes);
    double* p = scratch.first.data();
    for (uint32_t i = begin; i < end; ++i) {
      ClassProbabilities(scores, num_documents, num_classes, i, p);
      const int32_t label = queries_.labels[i];
      for (int32_t k = 0; k < num_classes; ++k) {
        const size_t at = k * num_documents + i;
        gradients[at] = static_cast<float>(p[k] - (k == label ? 1.0 : 0.0));
        hessians[at] = static_cast<float>(factor * p[k] * (1.0 - p[k]));
      }
    }
  });
}

double McRankObjective::Loss(absl::Span<const double> scores) const {
  const size_t num_documents = queries_.num_documents();
  return SumOverQueries(queries_, [&](size_t q, QueryScratch& /*scratch*/) {
    double loss = 0.0;
    for (uint32_t i = queries_.begin(q); i < queries_.offsets[q + 1]; ++i) {
      double top = scores[i];
      for (int32_t k = 1; k < num_classes_; ++k) {
        top = std::max(top, scores[k * num_documents + i]);
      }
      double sum = 0.0;
      for (int32_t k = 0; k < num_classes_; ++k) {
        sum += std::exp(scores[k * num_documents + i] - top);
      }
      loss += top + std::log(sum) - scores[queries_.labels[i] * num_documents + i];
    }
    return loss;
  });
}

std::vector<std::string> McRankObjective::Describe() const {
  return {absl::StrFormat(
      "mcrank: %d classes (one tree per class per iteration), softmax cross "
      "entropy, hessian factor %s; ranked by expected relevance",
      num_classes_, options_.friedman_factor ? "K/(K-1)" : "1")};
}

}  // namespace plrank
