#include "core/objectives/plackett_luce/permutation_sampled.h"

#include <omp.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/pl_test_util.h"

namespace plrank {
namespace {

using testing::BruteLogLikelihood;
using testing::MakeDataset;
using testing::RandomDataset;
using testing::RandomScores;

PlackettLuceOptions Options(int topk, int permutations) {
  PlackettLuceOptions options = PaperPlackettLuceOptions();
  options.topk = topk;
  options.permutations = permutations;
  return options;
}

struct Derivatives {
  std::vector<double> first, diagonal;
};

Derivatives Compute(const PlackettLucePermutationObjective& objective,
                    const std::vector<double>& scores,
                    const std::vector<uint8_t>& bag = {}) {
  Derivatives result{std::vector<double>(scores.size()),
                     std::vector<double>(scores.size())};
  objective.ComputeDerivatives(scores, bag, absl::MakeSpan(result.first),
                               absl::MakeSpan(result.diagonal));
  return result;
}

// The paper's worked example: n = 4, K = 2, pi = d1 d2 d3 d4.
TEST(PlackettLuceTest, PaperFourDocumentExample) {
  const Dataset data = MakeDataset({{3, 2, 1, 0}});
  PlackettLucePermutationObjective objective(Options(2, 1));
  ASSERT_TRUE(objective.Init(data, 1).ok());
  const std::vector<double> s = {0.3, -1.2, 0.8, 0.1};
  const double z1 = std::exp(s[0]) + std::exp(s[1]) + std::exp(s[2]) +
                    std::exp(s[3]);                     // C1 = {1,2,3,4}
  const double z2 = z1 - std::exp(s[0]);                // C2 = {2,3,4}
  auto p1 = [&](int d) { return std::exp(s[d]) / z1; };
  auto p2 = [&](int d) { return std::exp(s[d]) / z2; };
  const double expected[4] = {1 - p1(0), 1 - p1(1) - p2(1), -p1(2) - p2(2),
                              -p1(3) - p2(3)};
  const Derivatives derivatives = Compute(objective, s);
  for (int d = 0; d < 4; ++d) {
    EXPECT_NEAR(derivatives.first[d], expected[d], 1e-14) << d;
    const double diagonal =
        p1(d) * (1 - p1(d)) + (d > 0 ? p2(d) * (1 - p2(d)) : 0.0);
    EXPECT_NEAR(-derivatives.diagonal[d], diagonal, 1e-14) << d;
  }
  const double log_likelihood = s[0] - std::log(z1) + s[1] - std::log(z2);
  EXPECT_NEAR(objective.Loss(s), -log_likelihood, 1e-13);
  // The float gradients the booster sees: -L'(d) and the diagonal.
  std::vector<float> g(4), h(4);
  objective.ComputeGradients(s, {}, absl::MakeSpan(g), absl::MakeSpan(h));
  for (int d = 0; d < 4; ++d) {
    EXPECT_FLOAT_EQ(g[d], static_cast<float>(-expected[d]));
    EXPECT_GT(h[d], 0.0f);
  }
}

// Loss against the definition and L'(d), diagonal L'' against central finite
// differences, over sizes, K, m and many ties.
TEST(PlackettLuceTest, GradientMatchesFiniteDifferences) {
  // Thousands of tiny parallel calls: one thread keeps the test fast on a
  // busy machine (thread independence is tested on its own below).
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(1);
  struct Config {
    int topk, permutations, max_label;
  };
  for (const Config& config : {Config{1, 1, 2}, Config{3, 1, 2},
                               Config{10, 3, 2}, Config{10, 6, 1},
                               Config{40, 2, 4}, Config{5, 9, 0}}) {
    SCOPED_TRACE(::testing::Message() << "K=" << config.topk
                                      << " m=" << config.permutations);
    const Dataset data = RandomDataset(config.topk * 31 + config.permutations,
                                       12, 1, 20, config.max_label);
    PlackettLucePermutationObjective objective(Options(config.topk, config.permutations));
    ASSERT_TRUE(objective.Init(data, 17).ok());
    std::vector<double> scores = RandomScores(5, data.num_documents(), 2.0);
    EXPECT_NEAR(-objective.Loss(scores),
                static_cast<double>(
                    BruteLogLikelihood(objective.contexts(), scores)),
                1e-10);
    const Derivatives derivatives = Compute(objective, scores);
    const double h = 1e-4;
    std::vector<uint8_t> own_query(data.num_queries());
    for (size_t d = 0, q = 0; d < data.num_documents(); ++d) {
      while (d >= data.query_end(q)) ++q;
      // Only d's query depends on s_d: restrict the brute force to it.
      std::fill(own_query.begin(), own_query.end(), 0);
      own_query[q] = 1;
      const double saved = scores[d];
      scores[d] = saved + h;
      const long double up =
          BruteLogLikelihood(objective.contexts(), scores, own_query);
      const Derivatives up_derivatives = Compute(objective, scores);
      scores[d] = saved - h;
      const long double down =
          BruteLogLikelihood(objective.contexts(), scores, own_query);
      const Derivatives down_derivatives = Compute(objective, scores);
      scores[d] = saved;
      EXPECT_NEAR(derivatives.first[d], static_cast<double>((up - down) / (2 * h)),
                  1e-7)
          << "document " << d;
      EXPECT_NEAR(derivatives.diagonal[d],
                  (up_derivatives.first[d] - down_derivatives.first[d]) / (2 * h),
                  1e-7)
          << "document " << d;
    }
  }
  omp_set_num_threads(saved_threads);
}

// LL as a function of a shift v of every in-bag document of leaf `leaf`.
long double ShiftedLogLikelihood(const PlackettLucePermutationObjective& objective,
                                 std::vector<double> scores,
                                 const std::vector<int32_t>& leaves,
                                 int32_t leaf, double v,
                                 const std::vector<uint8_t>& bag = {}) {
  for (size_t d = 0; d < scores.size(); ++d) {
    if (leaves[d] == leaf) scores[d] += v;
  }
  return BruteLogLikelihood(objective.contexts(), scores, bag);
}

std::vector<int32_t> RandomLeaves(uint64_t seed, size_t n, int32_t num_leaves) {
  SplitMix64 rng(seed);
  std::vector<int32_t> leaves(n);
  for (int32_t& leaf : leaves) leaf = static_cast<int32_t>(rng.BelowUnbiased(num_leaves));
  return leaves;
}

// The per-context L''_U is the exact second derivative of LL along the leaf's
// shift; the diagonal approximation is not.
TEST(PlackettLuceTest, LeafDerivativesMatchFiniteDifferences) {
  for (int m : {1, 3}) {
    SCOPED_TRACE(::testing::Message() << "m=" << m);
    const Dataset data = RandomDataset(100 + m, 15, 1, 24, 2);
    PlackettLucePermutationObjective objective(Options(10, m));
    ASSERT_TRUE(objective.Init(data, 3).ok());
    const std::vector<double> scores = RandomScores(8, data.num_documents(), 1.5);
    const int32_t num_leaves = 5;
    const std::vector<int32_t> leaves =
        RandomLeaves(m, data.num_documents(), num_leaves);
    const auto leaf_derivatives =
        objective.ComputeLeafDerivatives(scores, leaves, num_leaves);
    const Derivatives derivatives = Compute(objective, scores);
    double largest_gap = 0.0;
    for (int32_t u = 0; u < num_leaves; ++u) {
      const double h = 1e-3, h1 = 1e-5;
      const long double up = ShiftedLogLikelihood(objective, scores, leaves, u, h);
      const long double mid = ShiftedLogLikelihood(objective, scores, leaves, u, 0);
      const long double down =
          ShiftedLogLikelihood(objective, scores, leaves, u, -h);
      EXPECT_NEAR(leaf_derivatives.first[u],
                  static_cast<double>(
                      (ShiftedLogLikelihood(objective, scores, leaves, u, h1) -
                       ShiftedLogLikelihood(objective, scores, leaves, u, -h1)) /
                      (2 * h1)),
                  1e-7);
      EXPECT_NEAR(leaf_derivatives.second[u],
                  static_cast<double>((up - 2 * mid + down) / (h * h)), 1e-5);
      EXPECT_LT(leaf_derivatives.second[u], 0.0);
      double first_sum = 0.0, diagonal_sum = 0.0;
      for (size_t d = 0; d < leaves.size(); ++d) {
        if (leaves[d] != u) continue;
        first_sum += derivatives.first[d];
        diagonal_sum += derivatives.diagonal[d];
      }
      EXPECT_NEAR(leaf_derivatives.first[u], first_sum, 1e-10);
      // Off-diagonal terms -sum p_d p_e make the exact curvature flatter.
      EXPECT_GT(leaf_derivatives.second[u], diagonal_sum);
      largest_gap = std::max(largest_gap,
                             leaf_derivatives.second[u] - diagonal_sum);
    }
    EXPECT_GT(largest_gap, 0.1);
  }
}

TEST(PlackettLuceTest, LeafStepIncreasesLogLikelihood) {
  const Dataset data = RandomDataset(21, 200, 1, 40, 3);
  PlackettLucePermutationObjective objective(Options(10, 3));
  ASSERT_TRUE(objective.Init(data, 2).ok());
  const std::vector<double> scores = RandomScores(4, data.num_documents(), 1.0);
  const int32_t num_leaves = 8;
  const std::vector<int32_t> leaves =
      RandomLeaves(77, data.num_documents(), num_leaves);
  std::vector<float> g(scores.size()), h(scores.size());
  objective.ComputeGradients(scores, {}, absl::MakeSpan(g), absl::MakeSpan(h));
  LeafAssignment assignment;
  assignment.num_leaves = num_leaves;
  assignment.leaf_of_document = leaves;
  assignment.gradients = g;
  assignment.hessians = h;
  std::vector<double> values(num_leaves);
  objective.ComputeLeafValues(scores, assignment, absl::MakeSpan(values));
  const auto derivatives =
      objective.ComputeLeafDerivatives(scores, leaves, num_leaves);
  for (int32_t u = 0; u < num_leaves; ++u) {
    // Ascent direction: the sign of L'_U. Each leaf alone: LL rises.
    EXPECT_GT(values[u] * derivatives.first[u], 0.0);
    EXPECT_GT(ShiftedLogLikelihood(objective, scores, leaves, u, values[u]),
              ShiftedLogLikelihood(objective, scores, leaves, u, 0.0));
  }
  for (double learning_rate : {0.1, 0.5}) {
    std::vector<double> next = scores;
    for (size_t d = 0; d < next.size(); ++d) {
      next[d] += learning_rate * values[leaves[d]];
    }
    EXPECT_LT(objective.Loss(next), objective.Loss(scores)) << learning_rate;
  }
}

TEST(PlackettLuceTest, DampingAndClipGuardTinyCurvature) {
  // One query where the chosen document has a vanishing probability: L'' ~ 0
  // while L' ~ 1, so the raw Newton step would explode.
  const Dataset data = MakeDataset({{1, 0, 0}});
  PlackettLuceOptions options = Options(1, 1);
  options.max_leaf_step = 20.0;
  PlackettLucePermutationObjective objective(options);
  ASSERT_TRUE(objective.Init(data, 1).ok());
  const std::vector<double> scores = {-60.0, 0.0, 0.0};
  const std::vector<int32_t> leaves = {0, 1, 1};
  LeafAssignment assignment;
  assignment.num_leaves = 2;
  assignment.leaf_of_document = leaves;
  std::vector<double> values(2);
  objective.ComputeLeafValues(scores, assignment, absl::MakeSpan(values));
  EXPECT_DOUBLE_EQ(values[0], 20.0);
  EXPECT_LT(values[1], 0.0);
  EXPECT_TRUE(std::isfinite(values[1]));
}

TEST(PlackettLuceTest, BitwiseIdenticalAcrossThreadCounts) {
  const Dataset data = RandomDataset(5, 700, 1, 60, 4);
  PlackettLucePermutationObjective objective(Options(10, 3));
  ASSERT_TRUE(objective.Init(data, 9).ok());
  const std::vector<double> scores = RandomScores(6, data.num_documents(), 2.0);
  const int32_t num_leaves = 31;
  const std::vector<int32_t> leaves =
      RandomLeaves(12, data.num_documents(), num_leaves);
  struct Run {
    std::vector<float> g, h;
    std::vector<double> values;
    double loss;
  };
  auto run = [&](int threads) {
    omp_set_num_threads(threads);
    Run result{std::vector<float>(scores.size()),
               std::vector<float>(scores.size()),
               std::vector<double>(num_leaves), 0.0};
    objective.ComputeGradients(scores, {}, absl::MakeSpan(result.g),
                               absl::MakeSpan(result.h));
    LeafAssignment assignment;
    assignment.num_leaves = num_leaves;
    assignment.leaf_of_document = leaves;
    assignment.gradients = result.g;
    assignment.hessians = result.h;
    objective.ComputeLeafValues(scores, assignment,
                                absl::MakeSpan(result.values));
    result.loss = objective.Loss(scores);
    return result;
  };
  const int saved_threads = omp_get_max_threads();
  const Run one = run(1);
  for (int threads : {2, 4}) {
    const Run other = run(threads);
    EXPECT_EQ(std::memcmp(one.g.data(), other.g.data(), one.g.size() * 4), 0);
    EXPECT_EQ(std::memcmp(one.h.data(), other.h.data(), one.h.size() * 4), 0);
    EXPECT_EQ(std::memcmp(one.values.data(), other.values.data(),
                          one.values.size() * 8),
              0);
    EXPECT_EQ(std::memcmp(&one.loss, &other.loss, 8), 0);
  }
  omp_set_num_threads(saved_threads);
}

TEST(PlackettLuceTest, BaggingMaskRespected) {
  const Dataset data = RandomDataset(8, 30, 2, 20, 2);
  PlackettLucePermutationObjective objective(Options(10, 2));
  ASSERT_TRUE(objective.Init(data, 4).ok());
  const std::vector<double> scores = RandomScores(2, data.num_documents(), 1.0);
  std::vector<uint8_t> bag(data.num_queries());
  for (size_t q = 0; q < bag.size(); ++q) bag[q] = q % 3 != 0;
  std::vector<float> g(scores.size()), h(scores.size());
  std::vector<float> g_all(scores.size()), h_all(scores.size());
  objective.ComputeGradients(scores, bag, absl::MakeSpan(g), absl::MakeSpan(h));
  objective.ComputeGradients(scores, {}, absl::MakeSpan(g_all),
                             absl::MakeSpan(h_all));
  const int32_t num_leaves = 4;
  std::vector<int32_t> leaves = RandomLeaves(5, data.num_documents(), num_leaves);
  for (size_t q = 0; q < bag.size(); ++q) {
    for (uint32_t d = data.query_begin(q); d < data.query_end(q); ++d) {
      if (bag[q]) {
        EXPECT_EQ(g[d], g_all[d]);
        EXPECT_EQ(h[d], h_all[d]);
      } else {
        EXPECT_EQ(g[d], 0.0f);
        EXPECT_EQ(h[d], 0.0f);
        leaves[d] = -1;
      }
    }
  }
  const auto derivatives =
      objective.ComputeLeafDerivatives(scores, leaves, num_leaves);
  std::vector<int32_t> shifted_leaves = leaves;
  for (int32_t u = 0; u < num_leaves; ++u) {
    const double step = 1e-3, small_step = 1e-5;
    auto ll = [&](double v) {
      return ShiftedLogLikelihood(objective, scores, leaves, u, v, bag);
    };
    EXPECT_NEAR(derivatives.first[u],
                static_cast<double>((ll(small_step) - ll(-small_step)) /
                                    (2 * small_step)),
                1e-7);
    EXPECT_NEAR(derivatives.second[u],
                static_cast<double>((ll(step) - 2 * ll(0) + ll(-step)) /
                                    (step * step)),
                1e-5);
  }
}

TEST(PlackettLuceTest, SmallAndDegenerateQueries) {
  // n = 1, K > n, and an all-tied query.
  const Dataset data = MakeDataset({{2}, {1, 0, 2}, {1, 1, 1, 1}});
  const std::vector<double> scores = {0.5, 0.1, -0.3, 0.7, 0.2, -0.1, 0.4, 0.0};
  for (bool skip : {false, true}) {
    PlackettLuceOptions options = Options(10, 3);
    options.skip_tied_queries = skip;
    PlackettLucePermutationObjective objective(options);
    ASSERT_TRUE(objective.Init(data, 1).ok());
    const auto queries = objective.contexts().queries();
    EXPECT_EQ(queries[0].depth, 0u);  // n = 1: nothing to rank
    EXPECT_EQ(queries[1].depth, 2u);  // K = min(10, 3) minus the singleton
    EXPECT_EQ(queries[2].depth, skip ? 0u : 3u);
    const Derivatives derivatives = Compute(objective, scores);
    EXPECT_EQ(derivatives.first[0], 0.0);
    double tied_sum = 0.0;
    for (int d = 4; d < 8; ++d) tied_sum += std::abs(derivatives.first[d]);
    if (skip) {
      EXPECT_EQ(tied_sum, 0.0);
    } else {
      EXPECT_GT(tied_sum, 0.0);  // as written, tied queries still push scores
    }
    // L' sums to 0 over a query: shifting all its scores changes nothing.
    double query_sum = 0.0;
    for (int d = 1; d < 4; ++d) query_sum += derivatives.first[d];
    EXPECT_NEAR(query_sum, 0.0, 1e-14);
    EXPECT_NEAR(-objective.Loss(scores),
                static_cast<double>(
                    BruteLogLikelihood(objective.contexts(), scores)),
                1e-12);
  }
}

TEST(PlackettLuceTest, DescribeReportsCompression) {
  const Dataset data = MakeDataset({{4, 0, 4, 4}});
  PlackettLucePermutationObjective objective(Options(10, 2));
  ASSERT_TRUE(objective.InitWithPermutations(data, {{{0, 2, 3, 1}, {2, 0, 3, 1}}})
                  .ok());
  const std::vector<std::string> lines = objective.Describe();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1],
            "contexts: 4 distinct of 6 (ratio 0.667, equivalent objectives "
            "1.33)");
}

}  // namespace
}  // namespace plrank
