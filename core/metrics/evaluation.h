#ifndef PLRANK_CORE_METRICS_EVALUATION_H_
#define PLRANK_CORE_METRICS_EVALUATION_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/metrics/ranking_metrics.h"

namespace plrank {

// Several metrics of one scoring of a dataset.
struct EvaluationReport {
  std::vector<MetricSpec> specs;
  std::vector<std::vector<double>> per_query;  // [metric][query], NaN = skipped
  std::vector<double> means;                   // [metric], MeanIgnoringNan
};

// Evaluates every spec; scores holds one value per document (see
// PerQueryMetric for the size-mismatch behaviour).
EvaluationReport Evaluate(const Dataset& data, absl::Span<const double> scores,
                          absl::Span<const MetricSpec> specs,
                          const MetricOptions& options);

// ndcg@1, ndcg@3, ndcg@5, ndcg@10, err, map.
std::vector<MetricSpec> DefaultEvalMetrics();

// Parses a comma-separated list such as "ndcg@10,err,map".
absl::StatusOr<std::vector<MetricSpec>> ParseMetricSpecList(
    std::string_view text);

// One row per metric of `report`: name and mean. With `compare_with`, also
// its mean for the same metric (matched by name), the difference
// report - compare_with and the paired two-tailed t-test p-value over
// queries; "-" where the metric is missing from compare_with or the query
// counts differ.
std::string FormatMetricsTable(const EvaluationReport& report,
                               const EvaluationReport* compare_with);

}  // namespace plrank

#endif  // PLRANK_CORE_METRICS_EVALUATION_H_
