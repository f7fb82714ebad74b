// Training weights in every loss that takes them (TrainingWeights): the
// weighted losses' derivatives against finite differences of their Loss,
// weights that must reproduce the unweighted loss, and the refusals.
#include <cmath>
#include <string>
#include <vector>

#include "core/objectives/lambdamart.h"
#include "core/objectives/plackett_luce/permutation_sampled.h"
#include "core/objectives/plackett_luce/plackett_luce.h"
#include "core/objectives/squared_loss.h"
#include "core/objectives/listnet_kl.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/pl_test_util.h"

namespace plrank {
namespace {

using testing::RandomDataset;
using testing::RandomScores;

TrainingWeights RandomWeights(const Dataset& data, uint64_t seed,
                              bool documents, bool queries) {
  TrainingWeights w;
  const std::vector<double> d = RandomScores(seed, data.num_documents(), 1.0);
  const std::vector<double> q = RandomScores(seed + 1, data.num_queries(), 1.0);
  // In [0.25, 4.25): positive, spread over more than an order of magnitude.
  if (documents) for (double v : d) w.document.push_back(2.25 + 2.0 * v);
  if (queries) for (double v : q) w.query.push_back(2.25 + 2.0 * v);
  if (documents) w.document[0] = 0.0;  // a zero weight is allowed
  return w;
}

// Gradient = dLoss/ds_d and hessian = d2Loss/ds_d2 by central differences.
void ExpectDerivativesMatchLoss(QueryObjective& objective,
                                const std::vector<double>& scores,
                                double tolerance, bool check_hessian) {
  const size_t n = scores.size();
  std::vector<double> g(n), h(n);
  objective.ComputeDerivativesDouble(scores, {}, absl::MakeSpan(g),
                                     absl::MakeSpan(h));
  for (size_t d = 0; d < n; ++d) {
    const double step = 1e-5, step2 = 1e-3;
    std::vector<double> s = scores;
    s[d] = scores[d] + step;
    const double up = objective.Loss(s);
    s[d] = scores[d] - step;
    const double down = objective.Loss(s);
    EXPECT_NEAR(g[d], (up - down) / (2 * step), tolerance) << "doc " << d;
    if (!check_hessian) continue;
    s[d] = scores[d] + step2;
    const double up2 = objective.Loss(s);
    s[d] = scores[d] - step2;
    const double down2 = objective.Loss(s);
    const double mid = objective.Loss(scores);
    EXPECT_NEAR(h[d], (up2 - 2 * mid + down2) / (step2 * step2),
                100 * tolerance)
        << "doc " << d;
  }
}

PlackettLuceOptions TieOptions(PlTies ties) {
  PlackettLuceOptions options = PaperPlackettLuceOptions();
  options.ties = ties;
  options.topk = 0;
  options.weighting = PlWeighting::kPosition;
  options.stop_at_lowest_label = true;
  return options;
}

TEST(TrainingWeightsTest, PlackettLuceDerivativesMatchFiniteDifferences) {
  for (PlTies ties : {PlTies::kEfron, PlTies::kBreslow, PlTies::kIndependent}) {
    for (int form = 0; form < 3; ++form) {
      SCOPED_TRACE(::testing::Message() << PlTiesName(ties) << " form " << form);
      const Dataset data = RandomDataset(11 + form, 9, 1, 14, 2);
      PlackettLuceObjective objective(TieOptions(ties));
      objective.SetTrainingWeights(
          RandomWeights(data, 5 + form, form != 1, form != 0));
      ASSERT_TRUE(objective.Init(data, 1).ok());
      const std::vector<double> scores =
          RandomScores(3 + form, data.num_documents(), 2.0);
      ExpectDerivativesMatchLoss(objective, scores, 1e-6, true);
    }
  }
}

TEST(TrainingWeightsTest, PlackettLuceLeafDerivativesMatchFiniteDifferences) {
  for (PlTies ties : {PlTies::kEfron, PlTies::kIndependent}) {
    SCOPED_TRACE(PlTiesName(ties));
    const Dataset data = RandomDataset(21, 12, 1, 20, 2);
    PlackettLuceObjective objective(TieOptions(ties));
    objective.SetTrainingWeights(RandomWeights(data, 9, true, true));
    ASSERT_TRUE(objective.Init(data, 1).ok());
    const std::vector<double> scores =
        RandomScores(4, data.num_documents(), 1.5);
    std::vector<int32_t> leaves(data.num_documents());
    for (size_t d = 0; d < leaves.size(); ++d) leaves[d] = (d * 7 + d / 3) % 4;
    const auto leaf = objective.ComputeLeafDerivatives(scores, leaves, 4);
    auto shifted = [&](int32_t u, double v) {
      std::vector<double> s = scores;
      for (size_t d = 0; d < s.size(); ++d) {
        if (leaves[d] == u) s[d] += v;
      }
      return -objective.Loss(s);  // LL
    };
    for (int32_t u = 0; u < 4; ++u) {
      const double h = 1e-3, h1 = 1e-5;
      EXPECT_NEAR(leaf.first[u], (shifted(u, h1) - shifted(u, -h1)) / (2 * h1),
                  1e-6);
      EXPECT_NEAR(leaf.second[u],
                  (shifted(u, h) - 2 * shifted(u, 0) + shifted(u, -h)) / (h * h),
                  1e-4);
    }
  }
}

// Equal document weights c in every group scale the whole loss by c; a
// query weight of 2 counts the query twice.
TEST(TrainingWeightsTest, PlackettLuceConstantWeightsScaleTheLoss) {
  const Dataset data = RandomDataset(31, 6, 2, 12, 3);
  const std::vector<double> scores = RandomScores(5, data.num_documents(), 1.0);
  PlackettLuceObjective plain(TieOptions(PlTies::kEfron));
  ASSERT_TRUE(plain.Init(data, 1).ok());
  PlackettLuceObjective scaled(TieOptions(PlTies::kEfron));
  TrainingWeights w;
  w.document.assign(data.num_documents(), 3.0);
  w.query.assign(data.num_queries(), 1.0);
  w.query[2] = 2.0;
  scaled.SetTrainingWeights(w);
  ASSERT_TRUE(scaled.Init(data, 1).ok());
  // Query 2 once more, unweighted, is what its weight 2 adds.
  TrainingWeights only_query2;
  only_query2.query.assign(data.num_queries(), 0.0);
  only_query2.query[2] = 1.0;
  PlackettLuceObjective query2(TieOptions(PlTies::kEfron));
  query2.SetTrainingWeights(only_query2);
  ASSERT_TRUE(query2.Init(data, 1).ok());
  EXPECT_NEAR(scaled.Loss(scores),
              3.0 * (plain.Loss(scores) + query2.Loss(scores)),
              1e-9 * scaled.Loss(scores));
}

// IPS on one clicked document: its term counts 1/p, the others' 1.
TEST(TrainingWeightsTest, IndependentTiesWeighEachClickedDocumentsPick) {
  // One query: two clicked documents (label 1), two not.
  const Dataset data = testing::MakeDataset({{1, 0, 1, 0}});
  const std::vector<double> s = {0.3, -0.2, 0.1, 0.4};
  PlackettLuceOptions options = TieOptions(PlTies::kIndependent);
  options.weighting = PlWeighting::kUniform;
  PlackettLuceObjective objective(options);
  TrainingWeights w;
  w.document = {1.0, 1.0, 4.0, 1.0};
  objective.SetTrainingWeights(w);
  ASSERT_TRUE(objective.Init(data, 1).ok());
  const double below = std::exp(-0.2) + std::exp(0.4);
  // Shares: w / mean(1, 4) = 0.4 and 1.6; the group weight (uniform 1 per
  // pick) times the mean 2.5: each member's pick counts 2.5 * share / 1 ...
  // i.e. 1 and 4.
  const double expected =
      1.0 * (std::log(below + std::exp(0.3)) - 0.3) +
      4.0 * (std::log(below + std::exp(0.1)) - 0.1);
  EXPECT_NEAR(objective.Loss(s), expected, 1e-12);
}

TEST(TrainingWeightsTest, LambdaMartPairsCountTheirBetterDocumentsWeight) {
  const Dataset data = RandomDataset(41, 8, 2, 16, 3);
  for (int form = 0; form < 3; ++form) {
    SCOPED_TRACE(form);
    LambdaMartOptions options;
    options.truncation = 0;
    LambdaMartObjective objective(options);
    objective.SetTrainingWeights(RandomWeights(data, 13, form != 1, form != 0));
    ASSERT_TRUE(objective.Init(data, 1).ok());
    // Well separated scores: no pair crosses within the differences, so dN
    // stays frozen.
    std::vector<double> scores(data.num_documents());
    for (size_t d = 0; d < scores.size(); ++d) scores[d] = 0.173 * ((d * 7) % 97);
    ExpectDerivativesMatchLoss(objective, scores, 1e-6, true);
  }
}

TEST(TrainingWeightsTest, LambdaMartUnitWeightsChangeNothing) {
  const Dataset data = RandomDataset(43, 5, 2, 12, 2);
  const std::vector<double> scores = RandomScores(6, data.num_documents(), 1.0);
  LambdaMartObjective plain({});
  ASSERT_TRUE(plain.Init(data, 1).ok());
  LambdaMartObjective ones({});
  TrainingWeights w;
  w.document.assign(data.num_documents(), 1.0);
  ones.SetTrainingWeights(w);
  ASSERT_TRUE(ones.Init(data, 1).ok());
  EXPECT_DOUBLE_EQ(plain.Loss(scores), ones.Loss(scores));
}

TEST(TrainingWeightsTest, SquaredLossIsWeightedPerDocument) {
  const Dataset data = RandomDataset(51, 4, 1, 6, 2);
  SquaredLossObjective objective(SquaredLossTarget::kLabel);
  objective.SetTrainingWeights(RandomWeights(data, 17, true, true));
  ASSERT_TRUE(objective.Init(data, 1).ok());
  ExpectDerivativesMatchLoss(objective,
                             RandomScores(7, data.num_documents(), 1.0), 1e-6,
                             true);
}

TEST(TrainingWeightsTest, QueryOnlyLossesScaleQueriesAndRefuseDocuments) {
  const Dataset data = RandomDataset(61, 5, 2, 10, 2);
  const std::vector<double> scores = RandomScores(8, data.num_documents(), 1.0);
  ListNetKlObjective plain(false);
  ASSERT_TRUE(plain.Init(data, 1).ok());
  ListNetKlObjective doubled(false);
  TrainingWeights w;
  w.query.assign(data.num_queries(), 2.0);
  doubled.SetTrainingWeights(w);
  ASSERT_TRUE(doubled.Init(data, 1).ok());
  EXPECT_NEAR(doubled.Loss(scores), 2.0 * plain.Loss(scores), 1e-12);
  std::vector<double> g1(scores.size()), h1(scores.size()), g2(scores.size()),
      h2(scores.size());
  plain.ComputeDerivativesDouble(scores, {}, absl::MakeSpan(g1), absl::MakeSpan(h1));
  doubled.ComputeDerivativesDouble(scores, {}, absl::MakeSpan(g2), absl::MakeSpan(h2));
  for (size_t d = 0; d < scores.size(); ++d) EXPECT_DOUBLE_EQ(g2[d], 2 * g1[d]);

  ListNetKlObjective refused(false);
  TrainingWeights documents;
  documents.document.assign(data.num_documents(), 1.0);
  refused.SetTrainingWeights(documents);
  EXPECT_THAT(std::string(refused.Init(data, 1).message()),
              ::testing::HasSubstr("takes query weights only"));
  PlackettLuceOptions permutation = PaperPlackettLuceOptions();
  permutation.ties = PlTies::kPermutation;
  PlackettLucePermutationObjective sampled(permutation);
  sampled.SetTrainingWeights(w);
  EXPECT_THAT(std::string(sampled.Init(data, 1).message()),
              ::testing::HasSubstr("--pl_ties=permutation takes no training weights"));
}

TEST(TrainingWeightsTest, WrongSizesAreRefused) {
  const Dataset data = RandomDataset(71, 3, 2, 4, 1);
  LambdaMartObjective objective({});
  TrainingWeights w;
  w.document.assign(data.num_documents() + 1, 1.0);
  objective.SetTrainingWeights(w);
  EXPECT_FALSE(objective.Init(data, 1).ok());
}

}  // namespace
}  // namespace plrank
