#include "core/objectives/mcrank.h"

#include <cmath>
#include <vector>

#include "core/data/dataset.h"
#include "core/data/random.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

// Two queries, labels 0..3 (so 4 classes), with ties.
Dataset FourGrades() {
  Dataset data;
  data.labels = {3, 0, 1, 1, 0, 2, 0, 0};
  data.query_offsets = {0, 5, 8};
  data.query_ids = {"a", "b"};
  return data;
}

std::vector<double> RandomScores(uint64_t seed, size_t n) {
  SplitMix64 rng(seed);
  std::vector<double> scores(n);
  for (double& s : scores) {
    s = 4.0 * static_cast<double>(rng.Next() >> 11) * 0x1.0p-53 - 2.0;
  }
  return scores;
}

TEST(McRankTest, OneOutputPerGrade) {
  McRankObjective objective({});
  EXPECT_EQ(objective.num_outputs(), 1);
  ASSERT_TRUE(objective.Init(FourGrades(), 0).ok());
  EXPECT_EQ(objective.num_outputs(), 4);
}

TEST(McRankTest, RejectsAbsurdNumberOfClasses) {
  Dataset data = FourGrades();
  data.labels[0] = McRankObjective::kMaxClasses;
  McRankObjective objective({});
  EXPECT_FALSE(objective.Init(data, 0).ok());
}

TEST(McRankTest, ClassProbabilitiesSumToOne) {
  const size_t docs = 8;
  std::vector<double> scores = RandomScores(1, 4 * docs);
  scores[3] = 700.0;  // exp would overflow without the max shift
  std::vector<double> p(4);
  for (size_t i = 0; i < docs; ++i) {
    McRankObjective::ClassProbabilities(scores, docs, 4, i, p.data());
    double sum = 0.0;
    for (double value : p) {
      EXPECT_GE(value, 0.0);
      sum += value;
    }
    EXPECT_NEAR(sum, 1.0, 1e-12) << "document " << i;
  }
  McRankObjective::ClassProbabilities(scores, docs, 4, 3, p.data());
  EXPECT_NEAR(p[0], 1.0, 1e-12);
}

TEST(McRankTest, GradientsArePMinusOneHotAndSumToZeroOverClasses) {
  const Dataset data = FourGrades();
  McRankObjective objective({});
  ASSERT_TRUE(objective.Init(data, 0).ok());
  const size_t docs = data.num_documents();
  const std::vector<double> scores = RandomScores(2, 4 * docs);
  std::vector<float> g(4 * docs), h(4 * docs);
  objective.ComputeGradients(scores, {}, absl::MakeSpan(g), absl::MakeSpan(h));
  std::vector<double> p(4);
  for (size_t i = 0; i < docs; ++i) {
    McRankObjective::ClassProbabilities(scores, docs, 4, i, p.data());
    double sum = 0.0;
    for (int k = 0; k < 4; ++k) {
      const double expected = p[k] - (k == data.labels[i] ? 1.0 : 0.0);
      EXPECT_NEAR(g[k * docs + i], expected, 1e-6);
      // Friedman's factor K/(K-1) = 4/3 by default.
      EXPECT_NEAR(h[k * docs + i], 4.0 / 3.0 * p[k] * (1.0 - p[k]), 1e-6);
      sum += g[k * docs + i];
    }
    EXPECT_NEAR(sum, 0.0, 1e-6);
  }
}

TEST(McRankTest, LossDecreasesAlongNegativeGradient) {
  const Dataset data = FourGrades();
  McRankObjective objective({});
  ASSERT_TRUE(objective.Init(data, 0).ok());
  const size_t n = 4 * data.num_documents();
  std::vector<double> scores = RandomScores(3, n);
  for (int iteration = 0; iteration < 20; ++iteration) {
    std::vector<float> g(n), h(n);
    objective.ComputeGradients(scores, {}, absl::MakeSpan(g), absl::MakeSpan(h));
    const double before = objective.Loss(scores);
    for (size_t i = 0; i < n; ++i) scores[i] -= 0.5 * g[i];
    EXPECT_LT(objective.Loss(scores), before) << "iteration " << iteration;
  }
}

}  // namespace
}  // namespace plrank
