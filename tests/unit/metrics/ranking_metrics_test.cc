#include "core/metrics/ranking_metrics.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/data/dataset.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kTolerance = 1e-12;

// Scores 4 > 3 > 2 > 1 rank the documents in index order; labels 1, 3, 0, 2.
// DCG@4 = (2^1-1)/log2(2) + (2^3-1)/log2(3) + 0/log2(4) + (2^2-1)/log2(5)
//       = 1 + 7/log2(3) + 3/log2(5)
// ideal order 3, 2, 1, 0: IDCG@4 = 7 + 3/log2(3) + 1/log2(4) = 7 + 3/log2(3) + 0.5
// NDCG@4 = 0.7142221296584441.
const std::vector<double> kScores = {4, 3, 2, 1};
const std::vector<int32_t> kLabels = {1, 3, 0, 2};

TEST(NdcgTest, HandComputedWholeList) {
  const double expected = (1 + 7 / std::log2(3.0) + 3 / std::log2(5.0)) /
                          (7 + 3 / std::log2(3.0) + 0.5);
  EXPECT_NEAR(expected, 0.7142221296584441, kTolerance);
  bool counted = false;
  EXPECT_NEAR(NdcgAtK(kScores, kLabels, 4, EmptyQueryNdcg::kOne, &counted),
              expected, kTolerance);
  EXPECT_TRUE(counted);
  // k = 0 and k > n both mean the whole list.
  EXPECT_NEAR(NdcgAtK(kScores, kLabels, 0, EmptyQueryNdcg::kOne), expected,
              kTolerance);
  EXPECT_NEAR(NdcgAtK(kScores, kLabels, 10, EmptyQueryNdcg::kOne), expected,
              kTolerance);
}

TEST(NdcgTest, TruncationUsesTopKOfIdealToo) {
  // DCG@2 = 1 + 7/log2(3); IDCG@2 = 7 + 3/log2(3) -> 0.6090899172578711.
  EXPECT_NEAR(NdcgAtK(kScores, kLabels, 2, EmptyQueryNdcg::kOne),
              0.6090899172578711, kTolerance);
  // DCG@1 = 1, IDCG@1 = 7.
  EXPECT_NEAR(NdcgAtK(kScores, kLabels, 1, EmptyQueryNdcg::kOne), 1.0 / 7,
              kTolerance);
}

TEST(NdcgTest, PerfectRankingIsOne) {
  const std::vector<double> scores = {1, 3, 0, 2};  // = labels
  EXPECT_NEAR(NdcgAtK(scores, kLabels, 0, EmptyQueryNdcg::kZero), 1.0,
              kTolerance);
  EXPECT_NEAR(NdcgAtK(scores, kLabels, 2, EmptyQueryNdcg::kZero), 1.0,
              kTolerance);
}

TEST(NdcgTest, EmptyQueryConventions) {
  const std::vector<double> scores = {0.5, 0.1, 0.3};
  const std::vector<int32_t> labels = {0, 0, 0};
  bool counted = false;
  EXPECT_EQ(NdcgAtK(scores, labels, 10, EmptyQueryNdcg::kOne, &counted), 1.0);
  EXPECT_TRUE(counted);
  EXPECT_EQ(NdcgAtK(scores, labels, 10, EmptyQueryNdcg::kZero, &counted), 0.0);
  EXPECT_TRUE(counted);
  EXPECT_TRUE(
      std::isnan(NdcgAtK(scores, labels, 10, EmptyQueryNdcg::kSkip, &counted)));
  EXPECT_FALSE(counted);
}

TEST(NdcgTest, TiesArePessimistic) {
  // All scores equal: ranked by ascending label, 0, 1, 2.
  // DCG = 0 + 1/log2(3) + 3/log2(4); IDCG = 3 + 1/log2(3) + 0.
  const std::vector<double> scores = {1, 1, 1};
  const std::vector<int32_t> labels = {2, 0, 1};
  const double expected =
      (1 / std::log2(3.0) + 1.5) / (3 + 1 / std::log2(3.0));
  EXPECT_NEAR(expected, 0.58688267143572, kTolerance);
  EXPECT_NEAR(NdcgAtK(scores, labels, 0, EmptyQueryNdcg::kOne), expected,
              kTolerance);
  // The order of the documents in the input does not matter.
  const std::vector<int32_t> permuted = {0, 1, 2};
  EXPECT_NEAR(NdcgAtK(scores, permuted, 0, EmptyQueryNdcg::kOne), expected,
              kTolerance);
}

TEST(NdcgTest, PartialTieOnlyReordersTiedDocuments) {
  // Doc 0 (label 0) is alone on top; docs 1 (label 2) and 2 (label 1) tie,
  // so label 1 goes first: gains 0, 1, 3.
  const std::vector<double> scores = {5, 1, 1};
  const std::vector<int32_t> labels = {0, 2, 1};
  const double expected =
      (1 / std::log2(3.0) + 3 / std::log2(4.0)) / (3 + 1 / std::log2(3.0));
  EXPECT_NEAR(NdcgAtK(scores, labels, 0, EmptyQueryNdcg::kOne), expected,
              kTolerance);
}

TEST(NdcgTest, NanScoresRankLast) {
  // Order: doc 1 (score 1), doc 2 (score 0), doc 0 (NaN).
  // DCG = 0 + 0 + 3/log2(4) = 1.5; IDCG = 3.
  const std::vector<double> scores = {kNaN, 1, 0};
  const std::vector<int32_t> labels = {2, 0, 0};
  EXPECT_NEAR(NdcgAtK(scores, labels, 0, EmptyQueryNdcg::kOne), 0.5,
              kTolerance);
}

TEST(ErrTest, HandComputed) {
  // Ranked labels 2, 1, 0 with max grade 2: R = 3/4, 1/4, 0.
  // ERR = 1 * 3/4 + 1/2 * 1/4 * (1 - 3/4) + 0 = 0.75 + 0.03125 = 0.78125.
  const std::vector<double> scores = {3, 2, 1};
  const std::vector<int32_t> labels = {2, 1, 0};
  EXPECT_NEAR(ErrAtK(scores, labels, 0, 2), 0.78125, kTolerance);
  EXPECT_NEAR(ErrAtK(scores, labels, 1, 2), 0.75, kTolerance);
  // max_grade <= 0 uses this query's max label (2).
  EXPECT_NEAR(ErrAtK(scores, labels, 0, 0), 0.78125, kTolerance);
  // Max grade 3: R = 3/8, 1/8 -> 3/8 + 1/2 * 1/8 * 5/8 = 0.4140625.
  EXPECT_NEAR(ErrAtK(scores, labels, 0, 3), 0.4140625, kTolerance);
}

TEST(ErrTest, ReversedRankingAndTies) {
  // Ranked labels 0, 1, 2 (max grade 2): R = 0, 1/4, 3/4.
  // ERR = 0 + 1/2 * 1/4 + 1/3 * 3/4 * (1 - 1/4) = 0.125 + 0.1875 = 0.3125.
  const std::vector<int32_t> labels = {2, 1, 0};
  EXPECT_NEAR(ErrAtK(std::vector<double>{1, 2, 3}, labels, 0, 2), 0.3125,
              kTolerance);
  // Constant scores tie: the pessimistic order is the same 0, 1, 2.
  EXPECT_NEAR(ErrAtK(std::vector<double>{7, 7, 7}, labels, 0, 2), 0.3125,
              kTolerance);
}

TEST(ErrTest, LabelsAboveMaxGradeAreClampedAndEmptyIsZero) {
  // Label 4 with max grade 2 counts as 2: R = 3/4.
  EXPECT_NEAR(ErrAtK(std::vector<double>{1}, std::vector<int32_t>{4}, 0, 2),
              0.75, kTolerance);
  EXPECT_EQ(ErrAtK(std::vector<double>{1, 2}, std::vector<int32_t>{0, 0}, 0, 2),
            0.0);
}

TEST(AveragePrecisionTest, HandComputed) {
  // Ranked relevance 1, 0, 1, 0, 1 (label 2 is relevant like 1):
  // AP = (1/1 + 2/3 + 3/5) / 3 = 0.7555...
  const std::vector<double> scores = {5, 4, 3, 2, 1};
  const std::vector<int32_t> labels = {1, 0, 2, 0, 1};
  EXPECT_NEAR(AveragePrecision(scores, labels), (1 + 2.0 / 3 + 0.6) / 3,
              kTolerance);
  // AP@3 = (1 + 2/3) / min(3, 3); AP@2 = 1 / min(3, 2).
  EXPECT_NEAR(AveragePrecisionAtK(scores, labels, 3), (1 + 2.0 / 3) / 3,
              kTolerance);
  EXPECT_NEAR(AveragePrecisionAtK(scores, labels, 2), 0.5, kTolerance);
}

TEST(AveragePrecisionTest, TiesAndEmptyQueries) {
  // Ties: relevant document after the irrelevant one: AP = 1/2.
  EXPECT_NEAR(AveragePrecision(std::vector<double>{1, 1},
                               std::vector<int32_t>{1, 0}),
              0.5, kTolerance);
  const std::vector<double> scores = {1, 2};
  const std::vector<int32_t> labels = {0, 0};
  EXPECT_EQ(AveragePrecision(scores, labels), 1.0);
  EXPECT_EQ(AveragePrecision(scores, labels, EmptyQueryNdcg::kZero), 0.0);
  EXPECT_TRUE(
      std::isnan(AveragePrecision(scores, labels, EmptyQueryNdcg::kSkip)));
}

// Three queries: [labels 2 1 0], [all 0], [0 4].
Dataset SmallDataset() {
  Dataset data;
  data.labels = {2, 1, 0, 0, 0, 0, 4};
  data.query_offsets = {0, 3, 5, 7};
  data.query_ids = {"1", "2", "3"};
  return data;
}

TEST(PerQueryMetricTest, NdcgConventionsAndMean) {
  const Dataset data = SmallDataset();
  // Query 1 ranked perfectly, query 3 reversed: DCG = 15/log2(3) vs IDCG 15.
  const std::vector<double> scores = {3, 2, 1, 0, 0, 1, 0};
  const MetricSpec ndcg{MetricSpec::Kind::kNdcg, 10};
  MetricOptions options;
  std::vector<double> values = PerQueryMetric(data, scores, ndcg, options);
  ASSERT_EQ(values.size(), 3u);
  EXPECT_NEAR(values[0], 1.0, kTolerance);
  EXPECT_EQ(values[1], 1.0);
  EXPECT_NEAR(values[2], 1 / std::log2(3.0), kTolerance);
  EXPECT_NEAR(MeanIgnoringNan(values), (2 + 1 / std::log2(3.0)) / 3,
              kTolerance);

  options.empty_query = EmptyQueryNdcg::kZero;
  values = PerQueryMetric(data, scores, ndcg, options);
  EXPECT_EQ(values[1], 0.0);
  EXPECT_NEAR(MeanIgnoringNan(values), (1 + 1 / std::log2(3.0)) / 3,
              kTolerance);

  options.empty_query = EmptyQueryNdcg::kSkip;
  values = PerQueryMetric(data, scores, ndcg, options);
  EXPECT_TRUE(std::isnan(values[1]));
  EXPECT_NEAR(MeanIgnoringNan(values), (1 + 1 / std::log2(3.0)) / 2,
              kTolerance);
}

TEST(PerQueryMetricTest, ErrUsesDatasetMaxGradeAndSkip) {
  const Dataset data = SmallDataset();
  const std::vector<double> scores = {3, 2, 1, 0, 0, 1, 0};
  const MetricSpec err{MetricSpec::Kind::kErr, 0};
  MetricOptions options;
  std::vector<double> values = PerQueryMetric(data, scores, err, options);
  // Dataset max grade 4. Query 1: R = 3/16, 1/16, 0:
  // 3/16 + 1/2 * 1/16 * 13/16 = 0.1875 + 0.025390625.
  EXPECT_NEAR(values[0], 0.212890625, kTolerance);
  EXPECT_EQ(values[1], 0.0);
  // Query 3 ranked 0, 4: R = 0, 15/16 -> 1/2 * 15/16.
  EXPECT_NEAR(values[2], 0.46875, kTolerance);
  options.max_grade = 2;  // labels above 2 clamp: R = 3/4, 1/4, 0.
  values = PerQueryMetric(data, scores, err, options);
  EXPECT_NEAR(values[0], 0.78125, kTolerance);
  options.empty_query = EmptyQueryNdcg::kSkip;
  values = PerQueryMetric(data, scores, err, options);
  EXPECT_TRUE(std::isnan(values[1]));
}

TEST(PerQueryMetricTest, SizeMismatchGivesNan) {
  const Dataset data = SmallDataset();
  const std::vector<double> scores = {1, 2};
  const std::vector<double> values = PerQueryMetric(
      data, scores, MetricSpec{MetricSpec::Kind::kMap, 0}, MetricOptions());
  ASSERT_EQ(values.size(), 3u);
  for (double v : values) EXPECT_TRUE(std::isnan(v));
}

TEST(PerQueryMetricTest, RandomQueriesStayInRangeAndIdealScorerIsPerfect) {
  std::mt19937 rng(7);
  Dataset data;
  data.query_offsets.push_back(0);
  for (int q = 0; q < 200; ++q) {
    const int size = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < size; ++i) data.labels.push_back(rng() % 5);
    data.query_offsets.push_back(data.labels.size());
  }
  std::vector<double> random_scores(data.labels.size());
  std::vector<double> ideal_scores(data.labels.size());
  for (size_t i = 0; i < random_scores.size(); ++i) {
    random_scores[i] = std::uniform_real_distribution<double>(-1, 1)(rng);
    ideal_scores[i] = data.labels[i];
  }
  for (const char* text : {"ndcg@1", "ndcg@10", "ndcg", "err", "map"}) {
    const MetricSpec spec = *ParseMetricSpec(text);
    const std::vector<double> random_values =
        PerQueryMetric(data, random_scores, spec, MetricOptions());
    const std::vector<double> ideal_values =
        PerQueryMetric(data, ideal_scores, spec, MetricOptions());
    for (size_t q = 0; q < random_values.size(); ++q) {
      EXPECT_GE(random_values[q], 0.0) << text;
      EXPECT_LE(random_values[q], 1.0 + kTolerance) << text;
      // No ranking beats sorting by label.
      EXPECT_LE(random_values[q], ideal_values[q] + kTolerance) << text;
      if (spec.kind != MetricSpec::Kind::kErr) {
        EXPECT_NEAR(ideal_values[q], 1.0, kTolerance) << text;
      }
    }
  }
}

TEST(MeanIgnoringNanTest, Basics) {
  EXPECT_EQ(MeanIgnoringNan(std::vector<double>{1, kNaN, 2}), 1.5);
  EXPECT_TRUE(std::isnan(MeanIgnoringNan(std::vector<double>{kNaN})));
  EXPECT_TRUE(std::isnan(MeanIgnoringNan(std::vector<double>{})));
}

}  // namespace
}  // namespace plrank
