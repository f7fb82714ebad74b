#include "core/pipeline/ndcg_evaluator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace plrank {

NdcgEvaluator::NdcgEvaluator(const Dataset* data,
                             const std::vector<int32_t>& cutoffs,
                             int32_t num_outputs, ScoreTransform transform,
                             const MetricOptions& options, Reducer* reducer)
    : data_(data),
      num_outputs_(num_outputs),
      transform_(transform),
      options_(options),
      reducer_(reducer != nullptr && reducer->num_ranks() > 1 ? reducer
                                                              : nullptr) {
  for (int32_t k : cutoffs) specs_.push_back({MetricSpec::Kind::kNdcg, k});
  if (HasQueryMetricWeights(*data)) {
    query_weights_.resize(data->num_queries());
    for (size_t q = 0; q < query_weights_.size(); ++q) {
      query_weights_[q] = QueryMetricWeight(*data, q);
    }
  }
}

std::vector<double> NdcgEvaluator::operator()(absl::Span<const double> scores,
                                              bool first_only) const {
  const size_t n = data_->num_documents();
  if (num_outputs_ == 1 || transform_ == ScoreTransform::kIdentity) {
    return Means(scores.subspan(0, n), first_only);
  }
  std::vector<double> ranking(n);
  for (size_t i = 0; i < n; ++i) {
    double max_raw = -std::numeric_limits<double>::infinity();
    for (int32_t k = 0; k < num_outputs_; ++k) {
      max_raw = std::max(max_raw, scores[k * n + i]);
    }
    double normalizer = 0.0, expectation = 0.0;
    for (int32_t k = 0; k < num_outputs_; ++k) {
      const double p = std::exp(scores[k * n + i] - max_raw);
      normalizer += p;
      expectation += k * p;
    }
    ranking[i] = expectation / normalizer;
  }
  return Means(ranking, first_only);
}

std::vector<double> NdcgEvaluator::Means(absl::Span<const double> scores,
                                         bool first_only) const {
  std::vector<double> means(specs_.size(),
                            std::numeric_limits<double>::quiet_NaN());
  const size_t computed = first_only ? 1 : specs_.size();
  if (reducer_ == nullptr) {
    for (size_t m = 0; m < computed; ++m) {
      const std::vector<double> per_query =
          PerQueryMetric(*data_, scores, specs_[m], options_);
      means[m] = query_weights_.empty() ? MeanIgnoringNan(per_query)
                                        : WeightedMean(per_query);
    }
    return means;
  }
  // Sums and (weighted) counts of the queries with a value, over every
  // rank.
  std::vector<double> sums(2 * computed, 0.0);
  for (size_t m = 0; m < computed; ++m) {
    const std::vector<double> per_query =
        PerQueryMetric(*data_, scores, specs_[m], options_);
    for (size_t q = 0; q < per_query.size(); ++q) {
      if (std::isnan(per_query[q])) continue;
      const double w = query_weights_.empty() ? 1.0 : query_weights_[q];
      sums[2 * m] += w * per_query[q];
      sums[2 * m + 1] += w;
    }
  }
  reducer_->Sum(absl::MakeSpan(sums));
  for (size_t m = 0; m < computed; ++m) {
    if (sums[2 * m + 1] > 0) means[m] = sums[2 * m] / sums[2 * m + 1];
  }
  return means;
}

double NdcgEvaluator::WeightedMean(const std::vector<double>& per_query) const {
  double sum = 0.0, total = 0.0;
  for (size_t q = 0; q < per_query.size(); ++q) {
    if (std::isnan(per_query[q])) continue;
    sum += query_weights_[q] * per_query[q];
    total += query_weights_[q];
  }
  return total > 0.0 ? sum / total : std::numeric_limits<double>::quiet_NaN();
}

std::vector<std::string> NdcgMetricNames(const std::vector<int32_t>& cutoffs) {
  std::vector<std::string> names;
  for (int32_t cutoff : cutoffs) names.push_back(absl::StrCat("ndcg@", cutoff));
  return names;
}

std::string FormatMetric(double value) {
  return std::isnan(value) ? std::string("-") : absl::StrFormat("%.4f", value);
}

std::string FormatMetrics(const std::vector<std::string>& names,
                          const std::vector<double>* values) {
  std::string text;
  for (size_t m = 0; m < names.size(); ++m) {
    absl::StrAppend(&text, m == 0 ? "" : " ", names[m], " ",
                    FormatMetric(values == nullptr
                                     ? std::numeric_limits<double>::quiet_NaN()
                                     : (*values)[m]));
  }
  return text;
}

void StoreMetrics(const std::vector<std::string>& names,
                  const std::vector<double>& values,
                  std::map<std::string, double>* out) {
  for (size_t m = 0; m < names.size() && m < values.size(); ++m) {
    if (!std::isnan(values[m])) (*out)[names[m]] = values[m];
  }
}

}  // namespace plrank
