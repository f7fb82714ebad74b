#include "core/metrics/evaluation.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/data/dataset.h"
#include "core/metrics/ranking_metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Four queries of three documents.
Dataset FourQueries() {
  Dataset data;
  data.labels = {2, 1, 0, 0, 1, 3, 1, 0, 0, 0, 0, 2};
  data.query_offsets = {0, 3, 6, 9, 12};
  data.query_ids = {"a", "b", "c", "d"};
  return data;
}

TEST(EvaluateTest, MatchesPerQueryMetric) {
  const Dataset data = FourQueries();
  const std::vector<double> scores = {3, 2, 1, 1, 2, 3, 1, 2, 3, 3, 2, 1};
  const std::vector<MetricSpec> specs = DefaultEvalMetrics();
  const EvaluationReport report = Evaluate(data, scores, specs, MetricOptions());
  ASSERT_EQ(report.specs.size(), 6u);
  ASSERT_EQ(report.per_query.size(), 6u);
  ASSERT_EQ(report.means.size(), 6u);
  for (size_t m = 0; m < specs.size(); ++m) {
    EXPECT_EQ(report.per_query[m],
              PerQueryMetric(data, scores, specs[m], MetricOptions()));
    EXPECT_EQ(report.means[m], MeanIgnoringNan(report.per_query[m]));
  }
  // Query a is ranked perfectly: NDCG@1 = 1. Query b: top is label 3 = 1.
  // Query c: top is label 0 -> 0. Query d: top is label 0 -> 0.
  EXPECT_DOUBLE_EQ(report.means[0], 0.5);
}

TEST(DefaultEvalMetricsTest, Names) {
  std::vector<std::string> names;
  for (const MetricSpec& spec : DefaultEvalMetrics()) {
    names.push_back(spec.Name());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"ndcg@1", "ndcg@3", "ndcg@5",
                                             "ndcg@10", "err", "map"}));
}

TEST(ParseMetricSpecListTest, ParsesAndRejects) {
  absl::StatusOr<std::vector<MetricSpec>> specs =
      ParseMetricSpecList("ndcg@10, err,map");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[1].Name(), "err");
  EXPECT_FALSE(ParseMetricSpecList("ndcg@10,auc").ok());
  EXPECT_FALSE(ParseMetricSpecList("").ok());
}

TEST(FormatMetricsTableTest, SingleAndCompared) {
  const Dataset data = FourQueries();
  const std::vector<double> good = {3, 2, 1, 1, 2, 3, 3, 2, 1, 1, 2, 3};
  const std::vector<double> bad = {1, 2, 3, 3, 2, 1, 1, 2, 3, 3, 2, 1};
  const std::vector<MetricSpec> specs = {*ParseMetricSpec("ndcg@3"),
                                         *ParseMetricSpec("err")};
  const EvaluationReport ours = Evaluate(data, good, specs, MetricOptions());
  const std::string single = FormatMetricsTable(ours, nullptr);
  EXPECT_THAT(single, HasSubstr("ndcg@3"));
  EXPECT_THAT(single, HasSubstr("1.000000"));  // the good scores are ideal
  EXPECT_THAT(single, Not(HasSubstr("p-value")));

  const std::vector<MetricSpec> other_specs = {*ParseMetricSpec("ndcg@3")};
  const EvaluationReport theirs =
      Evaluate(data, bad, other_specs, MetricOptions());
  const std::string compared = FormatMetricsTable(ours, &theirs);
  EXPECT_THAT(compared, HasSubstr("p-value"));
  const double p = PairedTTestPValue(ours.per_query[0], theirs.per_query[0]);
  const std::string diff =
      absl::StrFormat("%+10.6f", ours.means[0] - theirs.means[0]);
  EXPECT_THAT(compared, HasSubstr(diff));
  EXPECT_THAT(compared, HasSubstr(absl::StrFormat("%10.4g", p)));
  // "err" is missing from the other report.
  EXPECT_THAT(compared, HasSubstr("err"));
  EXPECT_THAT(compared, HasSubstr("         -"));
}

}  // namespace
}  // namespace plrank
