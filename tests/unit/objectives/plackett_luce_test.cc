#include "core/objectives/plackett_luce/plackett_luce.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "core/objectives/plackett_luce/permutation_sampled.h"
#include "gtest/gtest.h"
#include "tests/testing/pl_test_util.h"

namespace plrank {
namespace {

using testing::MakeDataset;
using testing::RandomDataset;
using testing::RandomScores;

PlackettLuceOptions Options(PlTies ties, PlWeighting weighting, int topk,
                            bool stop) {
  PlackettLuceOptions options = PaperPlackettLuceOptions();
  options.ties = ties;
  options.weighting = weighting;
  options.topk = topk;
  options.stop_at_lowest_label = stop;
  return options;
}

// The tie-group log-likelihood written from its definition, in long double,
// independently of PlTieGroups: groups by label, Efron/Breslow denominators.
long double BruteLogLikelihood(const Dataset& data,
                               const PlackettLuceOptions& options,
                               const std::vector<double>& scores,
                               int only_query = -1) {
  long double total = 0.0L;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    if (only_query >= 0 && static_cast<int>(q) != only_query) continue;
    std::map<int32_t, std::vector<size_t>, std::greater<>> groups;
    for (size_t d = data.query_begin(q); d < data.query_end(q); ++d) {
      groups[data.labels[d]].push_back(d);
    }
    size_t start = 0, index = 0;
    for (const auto& [label, members] : groups) {
      const bool lowest = ++index == groups.size();
      long double below = 0.0L, mass = 0.0L, mean = 0.0L;
      size_t documents_below = 0;
      for (size_t d = data.query_begin(q); d < data.query_end(q); ++d) {
        if (data.labels[d] < label) {
          below += std::exp((long double)scores[d]);
          ++documents_below;
        }
      }
      for (size_t d : members) {
        mass += std::exp((long double)scores[d]);
        mean += scores[d];
      }
      mean /= members.size();
      const size_t n = members.size();
      const bool skip = (lowest && options.stop_at_lowest_label) ||
                        (lowest && n == 1) || (lowest && groups.size() == 1 &&
                                               options.skip_tied_queries);
      long double weight_sum = 0.0L;
      for (size_t k = 0; !skip && k < n && start + k < (size_t)options.topk;
           ++k) {
        const long double c =
            options.ties == PlTies::kEfron ? 1.0L - (long double)k / n : 1.0L;
        const long double gain = std::pow(2.0L, label) - 1.0L;
        const long double discount = 1.0L / std::log2(start + k + 2.0L);
        long double w = 1.0L;
        if (options.weighting == PlWeighting::kGain) w = gain;
        if (options.weighting == PlWeighting::kPosition) w = discount;
        if (options.weighting == PlWeighting::kGainPosition) w = gain * discount;
        if (options.weighting == PlWeighting::kPairs) w = documents_below;
        if (options.weighting == PlWeighting::kSqrtPairs) {
          w = std::sqrt((long double)documents_below);
        }
        weight_sum += w;
        if (options.ties != PlTies::kIndependent) {
          total += w * (mean - std::log(below + c * mass));
        }
      }
      if (options.ties == PlTies::kIndependent && !skip) {
        for (size_t d : members) {
          const long double e = std::exp((long double)scores[d]);
          total += weight_sum / n * (scores[d] - std::log(below + e));
        }
      }
      start += n;
    }
  }
  return total;
}

struct Derivatives {
  std::vector<double> first, diagonal;
};

Derivatives Compute(const PlackettLuceObjective& objective,
                    const std::vector<double>& scores) {
  Derivatives result{std::vector<double>(scores.size()),
                     std::vector<double>(scores.size())};
  objective.ComputeDerivatives(scores, {}, absl::MakeSpan(result.first),
                               absl::MakeSpan(result.diagonal));
  return result;
}

// The gradient against central differences of the definition's
// log-likelihood, the diagonal against central differences of the gradient
// (h = 1e-4, 1e-7 absolute): finite, and the diagonal never positive.
void ExpectDerivativesMatchDefinition(
    const PlackettLuceObjective& objective, const Dataset& data,
    const PlackettLuceOptions& options, std::vector<double> scores) {
  const Derivatives derivatives = Compute(objective, scores);
  const double h = 1e-4;
  for (size_t d = 0, q = 0; d < data.num_documents(); ++d) {
    while (d >= data.query_end(q)) ++q;
    ASSERT_TRUE(std::isfinite(derivatives.first[d])) << d;
    ASSERT_TRUE(std::isfinite(derivatives.diagonal[d])) << d;
    const double saved = scores[d];
    scores[d] = saved + h;
    const long double up = BruteLogLikelihood(data, options, scores, q);
    const Derivatives up_derivatives = Compute(objective, scores);
    scores[d] = saved - h;
    const long double down = BruteLogLikelihood(data, options, scores, q);
    const Derivatives down_derivatives = Compute(objective, scores);
    scores[d] = saved;
    EXPECT_NEAR(derivatives.first[d], (double)((up - down) / (2 * h)), 1e-7)
        << "document " << d;
    EXPECT_NEAR(derivatives.diagonal[d],
                (up_derivatives.first[d] - down_derivatives.first[d]) / (2 * h),
                1e-7)
        << "document " << d;
    EXPECT_LE(derivatives.diagonal[d], 0.0);
  }
}

struct Config {
  PlTies ties;
  PlWeighting weighting;
  int topk;
  bool stop;
};

const Config kConfigs[] = {
    {PlTies::kEfron, PlWeighting::kUniform, 1000, true},
    {PlTies::kEfron, PlWeighting::kUniform, 1000, false},
    {PlTies::kEfron, PlWeighting::kGain, 7, true},
    {PlTies::kBreslow, PlWeighting::kPosition, 1000, false},
    {PlTies::kEfron, PlWeighting::kGainPosition, 12, false},
    {PlTies::kBreslow, PlWeighting::kUniform, 3, true},
    {PlTies::kIndependent, PlWeighting::kUniform, 1000, true},
    {PlTies::kIndependent, PlWeighting::kGainPosition, 9, false},
    {PlTies::kEfron, PlWeighting::kPairs, 1000, true},
    {PlTies::kBreslow, PlWeighting::kSqrtPairs, 5, false},
    {PlTies::kIndependent, PlWeighting::kPairs, 1000, false},
};

TEST(PlTiedTest, LossAndGradientsMatchTheDefinition) {
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(1);
  int config_index = 0;
  for (const Config& config : kConfigs) {
    SCOPED_TRACE(::testing::Message() << "config " << config_index);
    const Dataset data = RandomDataset(70 + config_index++, 10, 1, 18, 3);
    const PlackettLuceOptions options =
        Options(config.ties, config.weighting, config.topk, config.stop);
    PlackettLuceObjective objective(options);
    ASSERT_TRUE(objective.Init(data, 1).ok());
    std::vector<double> scores = RandomScores(3, data.num_documents(), 2.0);
    EXPECT_NEAR(-objective.Loss(scores),
                (double)BruteLogLikelihood(data, options, scores), 1e-10);
    ExpectDerivativesMatchDefinition(objective, data, options, scores);
  }
  omp_set_num_threads(saved_threads);
}

// Scores spread over hundreds of units (unbounded leaf steps reach them):
// the exponentials are then shifted to the middle of the query's range, so
// 1 / D^2 never overflows and nothing underflows; loss and derivatives still
// match the definition.
TEST(PlTiedTest, WideSpreadsMatchTheDefinition) {
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(1);
  for (PlTies ties : {PlTies::kEfron, PlTies::kIndependent}) {
    SCOPED_TRACE(::testing::Message() << PlTiesName(ties));
    const Dataset data = RandomDataset(90, 6, 1, 18, 3);
    const PlackettLuceOptions options =
        Options(ties, PlWeighting::kUniform, 1000, false);
    PlackettLuceObjective objective(options);
    ASSERT_TRUE(objective.Init(data, 1).ok());
    // Ranked by label, 200 units per grade: the lowest groups' contexts sit
    // ~400 below the top.
    std::vector<double> scores(data.num_documents());
    for (size_t d = 0; d < scores.size(); ++d) {
      scores[d] = 200.0 * data.labels[d] - 3.0 * static_cast<double>(d % 4);
    }
    const double loss = objective.Loss(scores);
    EXPECT_NEAR(-loss, (double)BruteLogLikelihood(data, options, scores),
                1e-12 * std::fabs(loss));
    ExpectDerivativesMatchDefinition(objective, data, options, scores);
  }
  omp_set_num_threads(saved_threads);
}

TEST(PlTiedTest, LeafDerivativesMatchFiniteDifferences) {
  int config_index = 0;
  for (const Config& config : kConfigs) {
    SCOPED_TRACE(::testing::Message() << "config " << config_index);
    const Dataset data = RandomDataset(90 + config_index++, 14, 1, 24, 2);
    const PlackettLuceOptions options =
        Options(config.ties, config.weighting, config.topk, config.stop);
    PlackettLuceObjective objective(options);
    ASSERT_TRUE(objective.Init(data, 1).ok());
    const std::vector<double> scores =
        RandomScores(8, data.num_documents(), 1.5);
    const int32_t num_leaves = 4;
    std::vector<int32_t> leaves(data.num_documents());
    for (size_t d = 0; d < leaves.size(); ++d) leaves[d] = (d * 7 + d / 3) % 4;
    const auto leaf = objective.ComputeLeafDerivatives(scores, leaves, num_leaves);
    const Derivatives derivatives = Compute(objective, scores);
    auto shifted = [&](int32_t u, double v) {
      std::vector<double> s = scores;
      for (size_t d = 0; d < s.size(); ++d) {
        if (leaves[d] == u) s[d] += v;
      }
      return BruteLogLikelihood(data, options, s);
    };
    for (int32_t u = 0; u < num_leaves; ++u) {
      const double h = 1e-3, h1 = 1e-5;
      EXPECT_NEAR(leaf.first[u],
                  (double)((shifted(u, h1) - shifted(u, -h1)) / (2 * h1)), 1e-7);
      EXPECT_NEAR(leaf.second[u],
                  (double)((shifted(u, h) - 2 * shifted(u, 0) + shifted(u, -h)) /
                           (h * h)),
                  1e-5);
      double first_sum = 0.0;
      for (size_t d = 0; d < leaves.size(); ++d) {
        if (leaves[d] == u) first_sum += derivatives.first[d];
      }
      EXPECT_NEAR(leaf.first[u], first_sum, 1e-9);
      EXPECT_GT(leaf.contexts[u], 0.0);
    }
  }
}

// Without ties every group is a singleton and both tie rules are the paper's
// ListMLE: same loss and derivatives as the permutation objective.
TEST(PlTiedTest, DistinctLabelsReduceToListMle) {
  std::vector<std::vector<int32_t>> labels = {{5, 3, 4, 0, 1, 2}, {2, 0, 1},
                                              {1, 0}};
  const Dataset data = MakeDataset(labels);
  const std::vector<double> scores = {0.3, -1.0, 2.0, 0.5, -0.2, 1.1,
                                      40.0, -45.0, 3.0, 0.0, 0.7};
  for (PlTies ties :
       {PlTies::kEfron, PlTies::kBreslow, PlTies::kIndependent}) {
    PlackettLuceOptions options = Options(ties, PlWeighting::kUniform, 4, false);
    PlackettLuceObjective tied(options);
    options.ties = PlTies::kPermutation;
    PlackettLucePermutationObjective paper(options);
    ASSERT_TRUE(tied.Init(data, 1).ok());
    ASSERT_TRUE(paper.Init(data, 1).ok());
    EXPECT_NEAR(tied.Loss(scores), paper.Loss(scores), 1e-12);
    const Derivatives a = Compute(tied, scores);
    std::vector<double> first(scores.size()), second(scores.size());
    paper.ComputeDerivatives(scores, {}, absl::MakeSpan(first),
                             absl::MakeSpan(second));
    for (size_t d = 0; d < scores.size(); ++d) {
      EXPECT_NEAR(a.first[d], first[d], 1e-12 * (1 + std::fabs(first[d])));
      EXPECT_NEAR(a.diagonal[d], second[d], 1e-12 * (1 + std::fabs(second[d])));
    }
  }
}

// A tie group of two above one document: Efron's pick k = 1 sees half the
// group; Breslow's sees all of it. Hand-computed with e^s = 1, 1, 1.
TEST(PlTiedTest, HandComputedTieGroup) {
  const Dataset data = MakeDataset({{1, 1, 0}});
  const std::vector<double> zeros = {0, 0, 0};
  PlackettLuceObjective efron(
      Options(PlTies::kEfron, PlWeighting::kUniform, 10, true));
  PlackettLuceObjective breslow(
      Options(PlTies::kBreslow, PlWeighting::kUniform, 10, true));
  ASSERT_TRUE(efron.Init(data, 1).ok());
  ASSERT_TRUE(breslow.Init(data, 1).ok());
  // Efron: log 3 + log 2; Breslow: 2 log 3.
  EXPECT_NEAR(efron.Loss(zeros), std::log(3.0) + std::log(2.0), 1e-12);
  EXPECT_NEAR(breslow.Loss(zeros), 2 * std::log(3.0), 1e-12);
  // Efron, d1: 2/2 - 1/3 - (1/2)/2 = 5/12; d3: -1/3 - 1/2 = -5/6.
  const Derivatives d = Compute(efron, zeros);
  EXPECT_NEAR(d.first[0], 5.0 / 12, 1e-12);
  EXPECT_NEAR(d.first[2], -5.0 / 6, 1e-12);
}

TEST(PlTiedTest, BitwiseIdenticalAcrossThreadCounts) {
  const Dataset data = RandomDataset(5, 700, 1, 60, 4);
  PlackettLuceObjective objective(
      Options(PlTies::kEfron, PlWeighting::kGain, 1000, true));
  ASSERT_TRUE(objective.Init(data, 9).ok());
  const std::vector<double> scores = RandomScores(6, data.num_documents(), 2.0);
  const int32_t num_leaves = 31;
  std::vector<int32_t> leaves(data.num_documents());
  for (size_t d = 0; d < leaves.size(); ++d) leaves[d] = (d * 13 + d / 5) % 31;
  auto run = [&](int threads, std::vector<float>* g, std::vector<float>* h,
                 std::vector<double>* values) {
    omp_set_num_threads(threads);
    g->assign(scores.size(), 0);
    h->assign(scores.size(), 0);
    values->assign(num_leaves, 0);
    objective.ComputeGradients(scores, {}, absl::MakeSpan(*g), absl::MakeSpan(*h));
    LeafAssignment assignment;
    assignment.num_leaves = num_leaves;
    assignment.leaf_of_document = leaves;
    objective.ComputeLeafValues(scores, assignment, absl::MakeSpan(*values));
    return objective.Loss(scores);
  };
  const int saved_threads = omp_get_max_threads();
  std::vector<float> g1, h1, g2, h2;
  std::vector<double> v1, v2;
  const double loss1 = run(1, &g1, &h1, &v1);
  const double loss2 = run(3, &g2, &h2, &v2);
  omp_set_num_threads(saved_threads);
  EXPECT_EQ(std::memcmp(g1.data(), g2.data(), g1.size() * 4), 0);
  EXPECT_EQ(std::memcmp(h1.data(), h2.data(), h1.size() * 4), 0);
  EXPECT_EQ(std::memcmp(v1.data(), v2.data(), v1.size() * 8), 0);
  EXPECT_EQ(std::memcmp(&loss1, &loss2, 8), 0);
}

}  // namespace
}  // namespace plrank
