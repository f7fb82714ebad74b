#include "trainer/logs/pooled_labels.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank::logs {
namespace {

using ::testing::HasSubstr;

PooledLabelOptions Options(uint32_t grades, double a, bool expected) {
  PooledLabelOptions options;
  options.grades = grades;
  options.curve = {1.0, 0.5};
  options.prior_exposure = a;
  options.expected_exposure = expected;
  return options;
}

// One logged request of three candidates: (doc, position, clicked), with
// the same marginals mu(d, 1..2) for every request.
struct Candidate {
  std::string doc;
  uint32_t position;
  bool clicked;
};

void AddRequest(PooledLabels& pooled, const std::string& query,
                const std::vector<Candidate>& candidates,
                const std::vector<double>& marginals) {
  pooled.BeginRequest(query);
  const size_t n = candidates.size();
  for (size_t d = 0; d < n; ++d) {
    pooled.Add(candidates[d].doc, "1:" + candidates[d].doc,
               candidates[d].position, &marginals[d], 2, n,
               candidates[d].clicked);
  }
}

TEST(PooledLabelsTest, GradeIsTheRoundedShrunkClickRate) {
  EXPECT_EQ(PooledGrade(0, 2.0, 0.5, 0, 4), 0u);    // never clicked
  EXPECT_EQ(PooledGrade(3, 30.0, 0.5, 0, 4), 0u);   // 0.1 * 4 = 0.4
  EXPECT_EQ(PooledGrade(3, 10.0, 0.5, 0, 4), 1u);   // 0.3 * 4 = 1.2
  EXPECT_EQ(PooledGrade(1, 0.1, 0.5, 0, 4), 4u);    // r = 10, capped at 1
  EXPECT_EQ(PooledGrade(1, 0.1, 0.1, 2, 4), 2u);    // (1 + 0.2) / 2.1 * 4 = 2.29
  EXPECT_EQ(PooledGrade(1, 0.0, 0.0, 0, 4), 4u);    // clicked, no exposure
}

// Query q, three requests; curve theta = 1, 0.5. Observed exposure:
//   a: positions 1, 2, 1 -> 2.5, 2 clicks;  b: 2, 1, - -> 1.5, 1 click;
//   c: -, -, 2 -> 0.5, 1 click.  Query p: d, e shown at 1, 2, no click.
// prior = 4 clicks / 6 exposure = 2/3. G = 10:
//   a = 0: a 0.8 -> 8, b 0.667 -> 7, c 2 -> 1 -> 10
//   a = 2: a (2 + 4/3) / 4.5 = 0.741 -> 7, b (1 + 4/3) / 3.5 = 0.667 -> 7,
//          c (1 + 4/3) / 2.5 = 0.933 -> 9
TEST(PooledLabelsTest, ObservedExposureHandComputed) {
  const std::vector<double> mu(6, 0.0);
  for (double a : {0.0, 2.0}) {
    PooledLabels pooled(Options(10, a, false));
    AddRequest(pooled, "q", {{"a", 1, true}, {"b", 2, false}, {"c", 0, false}}, mu);
    AddRequest(pooled, "p", {{"d", 1, false}, {"e", 2, false}}, mu);
    AddRequest(pooled, "q", {{"b", 1, true}, {"a", 2, true}, {"c", 0, false}}, mu);
    AddRequest(pooled, "q", {{"a", 1, false}, {"c", 2, true}, {"b", 0, false}}, mu);
    EXPECT_EQ(pooled.queries(), 2u);
    EXPECT_EQ(pooled.documents(), 5u);
    EXPECT_DOUBLE_EQ(pooled.prior(), 4.0 / 6.0);
    const std::string expected =
        a == 0.0
            ? "8 qid:1 1:a # query=q doc=a clicks=2 exposure=2.5 requests=3\n"
              "7 qid:1 1:b # query=q doc=b clicks=1 exposure=1.5 requests=3\n"
              "10 qid:1 1:c # query=q doc=c clicks=1 exposure=0.5 requests=3\n"
              "0 qid:2 1:d # query=p doc=d clicks=0 exposure=1 requests=1\n"
              "0 qid:2 1:e # query=p doc=e clicks=0 exposure=0.5 requests=1\n"
            : "7 qid:1 1:a # query=q doc=a clicks=2 exposure=2.5 requests=3\n"
              "7 qid:1 1:b # query=q doc=b clicks=1 exposure=1.5 requests=3\n"
              "9 qid:1 1:c # query=q doc=c clicks=1 exposure=0.5 requests=3\n"
              "0 qid:2 1:d # query=p doc=d clicks=0 exposure=1 requests=1\n"
              "0 qid:2 1:e # query=p doc=e clicks=0 exposure=0.5 requests=1\n";
    EXPECT_EQ(pooled.Letor(), expected) << "a = " << a;
  }
}

// Expected exposure: per request sum_j mu(d, j) theta_j, shown or not.
// mu rows (j = 1, 2): a (0.6, 0.2), b (0.3, 0.5), c (0.1, 0.3) ->
// a 0.7, b 0.55, c 0.25 per request; two requests, a clicked twice, b once:
//   a 2 / 1.4 -> 10, b 1 / 1.1 = 0.909 -> 9, c 0 clicks -> 0.
TEST(PooledLabelsTest, ExpectedExposureHandComputed) {
  // marginals[(j - 1) * n + d]
  const std::vector<double> mu = {0.6, 0.3, 0.1, 0.2, 0.5, 0.3};
  PooledLabels pooled(Options(10, 0, true));
  AddRequest(pooled, "q", {{"a", 1, true}, {"b", 2, false}, {"c", 0, false}}, mu);
  AddRequest(pooled, "q", {{"a", 2, true}, {"b", 1, true}, {"c", 0, false}}, mu);
  EXPECT_EQ(pooled.Letor(),
            "10 qid:1 1:a # query=q doc=a clicks=2 exposure=1.4 requests=2\n"
            "9 qid:1 1:b # query=q doc=b clicks=1 exposure=1.1 requests=2\n"
            "0 qid:1 1:c # query=q doc=c clicks=0 exposure=0.5 requests=2\n");
}

TEST(PooledLabelsTest, OptionsAreChecked) {
  EXPECT_TRUE(ValidatePooledLabelOptions(Options(4, 0, false)).ok());
  EXPECT_THAT(std::string(ValidatePooledLabelOptions(Options(32, 0, false)).message()),
              HasSubstr("--pooled_grades must be in 1..31"));
  PooledLabelOptions no_curve = Options(4, 0, false);
  no_curve.curve.clear();
  EXPECT_THAT(std::string(ValidatePooledLabelOptions(no_curve).message()),
              HasSubstr("needs --position_propensities"));
  PooledLabelOptions bad_curve = Options(4, 0, false);
  bad_curve.curve = {1, 0};
  EXPECT_THAT(std::string(ValidatePooledLabelOptions(bad_curve).message()),
              HasSubstr("0 is not in (0, 1]"));
  EXPECT_THAT(std::string(ValidatePooledLabelOptions(Options(4, -1, false)).message()),
              HasSubstr("--pooled_prior_exposure"));
}

}  // namespace
}  // namespace plrank::logs
