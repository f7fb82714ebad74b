// Properties every non-PL objective must have: gradients (and exact hessians)
// match central finite differences of its own Loss(), out-of-bag and
// signal-free queries get zeros, and results do not depend on the thread
// count.

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/objectives/cosine.h"
#include "core/objectives/registry.h"
#include "core/data/random.h"
#include "core/objectives/squared_loss.h"
#include "gmock/gmock.h"
#include "tests/testing/pl_test_util.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::plrank::testing::MakeDataset;

// Random queries with labels in [0, 2] (many ties), followed by one query
// whose labels are all 1 and one whose labels are all 0.
Dataset RandomDataset(uint64_t seed, int num_queries, int max_size) {
  SplitMix64 rng(seed);
  std::vector<std::vector<int32_t>> labels(num_queries);
  for (auto& query : labels) {
    const int size = 1 + static_cast<int>(rng.BelowUnbiased(max_size));
    for (int i = 0; i < size; ++i) {
      query.push_back(static_cast<int32_t>(rng.BelowUnbiased(3)));
    }
  }
  labels.push_back({1, 1, 1});
  labels.push_back({0, 0, 0, 0});
  return MakeDataset(labels);
}

std::vector<double> RandomScores(uint64_t seed, size_t n) {
  SplitMix64 rng(seed);
  std::vector<double> scores(n);
  for (double& s : scores) {
    s = 2.0 * static_cast<double>(rng.Next() >> 11) * 0x1.0p-53 - 1.0;
  }
  return scores;
}

std::unique_ptr<Objective> MakeInitialized(const std::string& name,
                                           const Dataset& data) {
  ObjectiveOptions options;
  options.name = name;
  options.mcrank_friedman_factor = false;  // so that h is the exact diagonal
  options.lambdamart_truncation = 4;       // truncation must be exercised
  absl::StatusOr<std::unique_ptr<Objective>> objective = MakeObjective(options);
  EXPECT_TRUE(objective.ok()) << objective.status();
  if (!objective.ok()) return nullptr;
  const absl::Status status = (*objective)->Init(data, 7);
  EXPECT_TRUE(status.ok()) << status;
  return *std::move(objective);
}

struct Derivatives {
  std::vector<float> gradients;
  std::vector<float> hessians;
};

Derivatives Compute(Objective& objective, const std::vector<double>& scores,
                    const std::vector<uint8_t>& in_bag = {}) {
  Derivatives d{std::vector<float>(scores.size(), -99.0f),
                std::vector<float>(scores.size(), -99.0f)};
  objective.ComputeGradients(scores, in_bag, absl::MakeSpan(d.gradients),
                             absl::MakeSpan(d.hessians));
  return d;
}

const std::vector<std::string>& OtherObjectives() {
  static const auto* names = new std::vector<std::string>{
      "lambdamart", "mcrank", "mart1", "mart2", "cmart1",
      "cosmart", "ccosmart", "klmart", "cklmart"};
  return *names;
}

// Losses with no signal in queries whose labels are all equal.
bool SkipsTiedQueries(const std::string& name) {
  return name == "lambdamart" || name == "cosmart" || name == "ccosmart" ||
         name == "klmart" || name == "cklmart";
}

class ObjectivePropertyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ObjectivePropertyTest, GradientsAndHessiansMatchFiniteDifferences) {
  const std::string& name = GetParam();
  const Dataset data = RandomDataset(11, 6, 9);
  std::unique_ptr<Objective> objective = MakeInitialized(name, data);
  ASSERT_NE(objective, nullptr);
  const size_t n = data.num_documents() * objective->num_outputs();
  std::vector<double> scores = RandomScores(5, n);
  const Derivatives d = Compute(*objective, scores);
  // The cosine losses report an approximate (positive) hessian.
  const bool exact_hessian = name != "cosmart" && name != "ccosmart";
  const double loss = objective->Loss(scores);
  for (size_t i = 0; i < n; ++i) {
    const double saved = scores[i];
    const double step = 1e-5;
    scores[i] = saved + step;
    const double plus = objective->Loss(scores);
    scores[i] = saved - step;
    const double minus = objective->Loss(scores);
    const double curvature_step = 1e-3;
    scores[i] = saved + curvature_step;
    const double far_plus = objective->Loss(scores);
    scores[i] = saved - curvature_step;
    const double far_minus = objective->Loss(scores);
    scores[i] = saved;
    const double gradient = (plus - minus) / (2.0 * step);
    EXPECT_NEAR(d.gradients[i], gradient, 1e-5 * (1.0 + std::abs(gradient)))
        << name << " document " << i;
    EXPECT_GE(d.hessians[i], 0.0f) << name << " document " << i;
    EXPECT_TRUE(std::isfinite(d.hessians[i]));
    if (exact_hessian) {
      const double second = (far_plus - 2.0 * loss + far_minus) /
                            (curvature_step * curvature_step);
      EXPECT_NEAR(d.hessians[i], second, 1e-4 * (1.0 + std::abs(second)))
          << name << " document " << i;
    }
  }
}

TEST_P(ObjectivePropertyTest, TiedQueriesFollowTheListwiseRule) {
  const std::string& name = GetParam();
  const Dataset data = RandomDataset(3, 4, 6);
  std::unique_ptr<Objective> objective = MakeInitialized(name, data);
  ASSERT_NE(objective, nullptr);
  const size_t docs = data.num_documents();
  const std::vector<double> scores =
      RandomScores(9, docs * objective->num_outputs());
  const Derivatives d = Compute(*objective, scores);
  const size_t num_queries = data.num_queries();
  for (size_t q = num_queries - 2; q < num_queries; ++q) {  // the tied ones
    double magnitude = 0.0;
    for (int32_t k = 0; k < objective->num_outputs(); ++k) {
      for (uint32_t i = data.query_begin(q); i < data.query_end(q); ++i) {
        magnitude += std::abs(d.gradients[k * docs + i]) +
                     std::abs(d.hessians[k * docs + i]);
      }
    }
    if (SkipsTiedQueries(name)) {
      EXPECT_EQ(magnitude, 0.0) << name << " query " << q;
    } else {
      EXPECT_GT(magnitude, 0.0) << name << " query " << q;
    }
  }
}

TEST_P(ObjectivePropertyTest, OutOfBagQueriesGetZeros) {
  const std::string& name = GetParam();
  const Dataset data = RandomDataset(4, 5, 8);
  std::unique_ptr<Objective> objective = MakeInitialized(name, data);
  ASSERT_NE(objective, nullptr);
  const size_t docs = data.num_documents();
  const std::vector<double> scores =
      RandomScores(2, docs * objective->num_outputs());
  std::vector<uint8_t> in_bag(data.num_queries(), 1);
  in_bag[1] = 0;
  const Derivatives all = Compute(*objective, scores);
  const Derivatives bagged = Compute(*objective, scores, in_bag);
  for (int32_t k = 0; k < objective->num_outputs(); ++k) {
    for (size_t q = 0; q < data.num_queries(); ++q) {
      for (uint32_t i = data.query_begin(q); i < data.query_end(q); ++i) {
        const size_t at = k * docs + i;
        if (in_bag[q]) {
          EXPECT_EQ(bagged.gradients[at], all.gradients[at]);
          EXPECT_EQ(bagged.hessians[at], all.hessians[at]);
        } else {
          EXPECT_EQ(bagged.gradients[at], 0.0f);
          EXPECT_EQ(bagged.hessians[at], 0.0f);
        }
      }
    }
  }
}

TEST_P(ObjectivePropertyTest, SameResultsWithOneAndTwoThreads) {
  const std::string& name = GetParam();
  const Dataset data = RandomDataset(8, 300, 40);
  std::unique_ptr<Objective> objective = MakeInitialized(name, data);
  ASSERT_NE(objective, nullptr);
  const std::vector<double> scores =
      RandomScores(6, data.num_documents() * objective->num_outputs());
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const Derivatives one = Compute(*objective, scores);
  const double loss_one = objective->Loss(scores);
  omp_set_num_threads(2);
  const Derivatives two = Compute(*objective, scores);
  const double loss_two = objective->Loss(scores);
  omp_set_num_threads(saved_threads);
  EXPECT_EQ(one.gradients, two.gradients);
  EXPECT_EQ(one.hessians, two.hessians);
  EXPECT_EQ(loss_one, loss_two);
}

INSTANTIATE_TEST_SUITE_P(AllOtherObjectives, ObjectivePropertyTest,
                         ::testing::ValuesIn(OtherObjectives()),
                         [](const auto& info) { return info.param; });

TEST(RegistryOtherObjectivesTest, KnowsEveryName) {
  for (const std::string& name : OtherObjectives()) {
    EXPECT_THAT(TreeObjectives(), ::testing::Contains(name));
    ObjectiveOptions options;
    options.name = name;
    absl::StatusOr<std::unique_ptr<Objective>> objective = MakeObjective(options);
    ASSERT_TRUE(objective.ok()) << objective.status();
    EXPECT_EQ((*objective)->name(), name);
  }
}

TEST(RegistryOtherObjectivesTest, RejectsBadLambdaMartOptions) {
  ObjectiveOptions options;
  options.name = "lambdamart";
  options.lambdamart_sigma = 0.0;
  EXPECT_FALSE(MakeObjective(options).ok());
  options.lambdamart_sigma = 1.0;
  options.lambdamart_truncation = -1;
  EXPECT_FALSE(MakeObjective(options).ok());
}

TEST(SquaredLossTest, TargetsFollowTheirDefinitions) {
  // Query 0: labels 2, 0, 1 -> IDCG = 3 + 1/log2(3); query 1: all zero.
  const Dataset data = MakeDataset({{2, 0, 1}, {0, 0}});
  const double ideal = 3.0 + 1.0 / std::log2(3.0);
  SquaredLossObjective mart1(SquaredLossTarget::kGain);
  SquaredLossObjective mart2(SquaredLossTarget::kLabel);
  SquaredLossObjective cmart1(SquaredLossTarget::kNormalizedGain);
  ASSERT_TRUE(mart1.Init(data, 0).ok());
  ASSERT_TRUE(mart2.Init(data, 0).ok());
  ASSERT_TRUE(cmart1.Init(data, 0).ok());
  EXPECT_THAT(mart1.targets(), ::testing::ElementsAre(3, 0, 1, 0, 0));
  EXPECT_THAT(mart2.targets(), ::testing::ElementsAre(2, 0, 1, 0, 0));
  EXPECT_THAT(cmart1.targets(),
              ::testing::ElementsAre(::testing::DoubleEq(3.0 / ideal), 0,
                                     ::testing::DoubleEq(1.0 / ideal), 0, 0));
}

// At s = 0 the cosine is undefined; the convention is "as if ||s|| = 1 and
// <s, t> = 0": Loss 1, g = -t, h = ||t||. One step along -g reaches the
// optimum of cosmart (s parallel to G).
TEST(CosineTest, ZeroScoresStartTowardsTheGains) {
  const Dataset data = MakeDataset({{2, 0, 1, 1}});
  const std::vector<double> gains = {3, 0, 1, 1};
  const double gain_norm = std::sqrt(9.0 + 0 + 1 + 1);
  for (bool consistent : {false, true}) {
    CosineObjective objective(consistent);
    ASSERT_TRUE(objective.Init(data, 0).ok());
    const double ideal = 3.0 + 1.0 / std::log2(3.0) + 1.0 / std::log2(4.0);
    const double scale = consistent ? 1.0 / ideal : 1.0 / gain_norm;
    const std::vector<double> zero(4, 0.0);
    const Derivatives d = Compute(objective, zero);
    EXPECT_DOUBLE_EQ(objective.Loss(zero), 1.0);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_FLOAT_EQ(d.gradients[i], -gains[i] * scale);
      EXPECT_FLOAT_EQ(d.hessians[i], gain_norm * scale);
    }
    std::vector<double> stepped(4);
    for (size_t i = 0; i < 4; ++i) stepped[i] = -0.1 * d.gradients[i];
    // 1 - <s, t>/||s|| at s || G: 0 for cosmart, 1 - ||G||/Z for ccosmart.
    EXPECT_NEAR(objective.Loss(stepped), 1.0 - gain_norm * scale, 1e-6);
    const Derivatives after = Compute(objective, stepped);
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(after.gradients[i], 0.0, 1e-4);
  }
}

// The loss is invariant to the scale of s, so the gradient is orthogonal to
// s and scales as 1/||s||, and the hessian as 1/||s||^2.
TEST(CosineTest, GradientIsOrthogonalToScoresAndScalesInversely) {
  const Dataset data = MakeDataset({{2, 0, 1, 0, 1}});
  CosineObjective objective(false);
  ASSERT_TRUE(objective.Init(data, 0).ok());
  const std::vector<double> scores = {0.3, -0.2, 0.5, 0.1, -0.4};
  std::vector<double> doubled(scores);
  for (double& s : doubled) s *= 2.0;
  const Derivatives d = Compute(objective, scores);
  const Derivatives d2 = Compute(objective, doubled);
  double dot = 0.0;
  for (size_t i = 0; i < scores.size(); ++i) {
    dot += d.gradients[i] * scores[i];
    EXPECT_NEAR(d2.gradients[i], 0.5 * d.gradients[i], 1e-6);
    EXPECT_NEAR(d2.hessians[i], 0.25 * d.hessians[i], 1e-6);
  }
  EXPECT_NEAR(dot, 0.0, 1e-6);
  EXPECT_NEAR(objective.Loss(scores), objective.Loss(doubled), 1e-12);
}

}  // namespace
}  // namespace plrank
