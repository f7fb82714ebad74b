#include "core/metrics/evaluation.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/metrics/ranking_metrics.h"

namespace plrank {

EvaluationReport Evaluate(const Dataset& data, absl::Span<const double> scores,
                          absl::Span<const MetricSpec> specs,
                          const MetricOptions& options) {
  EvaluationReport report;
  report.specs.assign(specs.begin(), specs.end());
  report.per_query.reserve(specs.size());
  report.means.reserve(specs.size());
  for (const MetricSpec& spec : specs) {
    report.per_query.push_back(PerQueryMetric(data, scores, spec, options));
    report.means.push_back(MeanIgnoringNan(report.per_query.back()));
  }
  return report;
}

std::vector<MetricSpec> DefaultEvalMetrics() {
  using Kind = MetricSpec::Kind;
  return {{Kind::kNdcg, 1}, {Kind::kNdcg, 3}, {Kind::kNdcg, 5},
          {Kind::kNdcg, 10}, {Kind::kErr, 0},  {Kind::kMap, 0}};
}

absl::StatusOr<std::vector<MetricSpec>> ParseMetricSpecList(
    std::string_view text) {
  std::vector<MetricSpec> specs;
  for (absl::string_view item :
       absl::StrSplit(absl::string_view(text.data(), text.size()), ',',
                      absl::SkipWhitespace())) {
    absl::StatusOr<MetricSpec> spec =
        ParseMetricSpec(std::string_view(item.data(), item.size()));
    if (!spec.ok()) return spec.status();
    specs.push_back(*spec);
  }
  if (specs.empty()) {
    return absl::InvalidArgumentError("empty metric list");
  }
  return specs;
}

std::string FormatMetricsTable(const EvaluationReport& report,
                               const EvaluationReport* compare_with) {
  std::string table;
  if (compare_with == nullptr) {
    absl::StrAppendFormat(&table, "%-10s %10s\n", "metric", "value");
    for (size_t m = 0; m < report.specs.size(); ++m) {
      absl::StrAppendFormat(&table, "%-10s %10.6f\n", report.specs[m].Name(),
                            report.means[m]);
    }
    return table;
  }
  absl::StrAppendFormat(&table, "%-10s %10s %10s %10s %10s\n", "metric",
                        "value", "other", "diff", "p-value");
  for (size_t m = 0; m < report.specs.size(); ++m) {
    const std::string name = report.specs[m].Name();
    size_t other = compare_with->specs.size();
    for (size_t o = 0; o < compare_with->specs.size(); ++o) {
      if (compare_with->specs[o] == report.specs[m]) {
        other = o;
        break;
      }
    }
    if (other == compare_with->specs.size()) {
      absl::StrAppendFormat(&table, "%-10s %10.6f %10s %10s %10s\n", name,
                            report.means[m], "-", "-", "-");
      continue;
    }
    const double other_mean = compare_with->means[other];
    const std::vector<double>& ours = report.per_query[m];
    const std::vector<double>& theirs = compare_with->per_query[other];
    const std::string p_value =
        ours.size() == theirs.size()
            ? absl::StrFormat("%10.4g", PairedTTestPValue(ours, theirs))
            : absl::StrFormat("%10s", "-");
    absl::StrAppendFormat(&table, "%-10s %10.6f %10.6f %+10.6f %s\n", name,
                          report.means[m], other_mean,
                          report.means[m] - other_mean, p_value);
  }
  return table;
}

}  // namespace plrank
