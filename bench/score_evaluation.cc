#include "bench/score_evaluation.h"

#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/metrics/ranking_metrics.h"

namespace plrank::bench {

absl::StatusOr<std::vector<double>> ReadScoreFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::vector<double> scores;
  int64_t line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty()) continue;
    double value;
    if (!absl::SimpleAtod(text, &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_number, ": not a number: ", text));
    }
    scores.push_back(value);
  }
  return scores;
}

absl::StatusOr<std::vector<std::vector<double>>> EvaluateScoresPerQuery(
    const Dataset& test, const std::vector<double>& scores) {
  if (scores.size() != test.num_documents()) {
    return absl::InvalidArgumentError(
        absl::StrCat("got ", scores.size(), " scores for ",
                     test.num_documents(), " test documents"));
  }
  MetricOptions options;
  options.empty_query = EmptyQueryNdcg::kOne;
  options.max_grade = 0;  // the test set's largest label
  std::vector<std::vector<double>> values;
  for (const char* name : kBenchMetricNames) {
    absl::StatusOr<MetricSpec> spec = ParseMetricSpec(name);
    if (!spec.ok()) return spec.status();
    values.push_back(PerQueryMetric(test, scores, *spec, options));
  }
  return values;
}

absl::StatusOr<std::vector<double>> EvaluateScores(
    const Dataset& test, const std::vector<double>& scores) {
  absl::StatusOr<std::vector<std::vector<double>>> values =
      EvaluateScoresPerQuery(test, scores);
  if (!values.ok()) return values.status();
  std::vector<double> means;
  for (const std::vector<double>& per_query : *values) {
    means.push_back(MeanIgnoringNan(per_query));
  }
  return means;
}

}  // namespace plrank::bench
