#include "core/objectives/lambdamart.h"

#include <cmath>
#include <vector>

#include "core/data/dataset.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

Dataset ThreeDocuments() {
  Dataset data;
  data.labels = {2, 0, 1};
  data.query_offsets = {0, 3};
  data.query_ids = {"q"};
  return data;
}

std::vector<double> Derive(const LambdaMartOptions& options,
                           const std::vector<double>& scores,
                           std::vector<double>* hessians) {
  LambdaMartObjective objective(options);
  EXPECT_TRUE(objective.Init(ThreeDocuments(), 0).ok());
  std::vector<double> gradients(3);
  hessians->assign(3, 0.0);
  QueryScratch scratch;
  objective.QueryDerivatives(0, scores.data(), gradients.data(),
                             hessians->data(), scratch);
  return gradients;
}

// Labels (2, 0, 1) -> gains G = (3, 0, 1); scores (0, 1, 2), sigma = 1.
// Ranking by score: doc2 (rank 0), doc1 (rank 1), doc0 (rank 2).
// Discounts D(r) = 1/log2(r + 2): D0 = 1, D1 = 0.6309298, D2 = 0.5.
// Ideal DCG (whole list) = 3*1 + 1*0.6309298 + 0 = 3.6309298.
// Pairs (high, low), rho = 1/(1 + exp(s_high - s_low)):
//  (0, 1): dN = 3*|D2 - D1|/3.6309298 = 3*0.1309298/3.6309298 = 0.1081787
//          rho = 1/(1 + e^-1) = 0.7310586, lambda = 0.0790850
//          hess = dN rho (1 - rho) = 0.0212692
//  (0, 2): dN = 2*|D2 - D0|/3.6309298 = 1/3.6309298 = 0.2754116
//          rho = 1/(1 + e^-2) = 0.8807971, lambda = 0.2425817
//          hess = 0.0289164
//  (2, 1): dN = 1*|D0 - D1|/3.6309298 = 0.3690702/3.6309298 = 0.1016462
//          rho = 1/(1 + e^1) = 0.2689414, lambda = 0.0273369
//          hess = 0.0199849
// g0 = -(0.0790850 + 0.2425817) = -0.3216667
// g1 = 0.0790850 + 0.0273369 = 0.1064218
// g2 = 0.2425817 - 0.0273369 = 0.2152448
// h0 = 0.0212692 + 0.0289164 = 0.0501857, h1 = 0.0212692 + 0.0199849 =
// 0.0412541, h2 = 0.0289164 + 0.0199849 = 0.0489013.
TEST(LambdaMartTest, HandWorkedThreeDocumentsAllPairs) {
  LambdaMartOptions options;
  options.truncation = 0;
  std::vector<double> h;
  const std::vector<double> g = Derive(options, {0.0, 1.0, 2.0}, &h);
  EXPECT_NEAR(g[0], -0.3216667, 1e-6);
  EXPECT_NEAR(g[1], 0.1064218, 1e-6);
  EXPECT_NEAR(g[2], 0.2152448, 1e-6);
  EXPECT_NEAR(h[0], 0.0501857, 1e-6);
  EXPECT_NEAR(h[1], 0.0412541, 1e-6);
  EXPECT_NEAR(h[2], 0.0489013, 1e-6);
}

// Truncation 1: only pairs touching rank 0 (doc2) count, so (0, 1) at ranks
// (2, 1) is dropped, and the normalizer is ideal DCG@1 = 3.
//  (0, 2): dN = 2*0.5/3 = 0.3333333, lambda = 0.8807971/3 = 0.2935990,
//          hess = 0.3333333*0.8807971*0.1192029 = 0.0349979
//  (2, 1): dN = 0.3690702/3 = 0.1230234, lambda = 0.1230234*0.2689414 =
//          0.0330861, hess = 0.0330861*0.7310586 = 0.0241879
// g0 = -0.2935990, g1 = 0.0330861, g2 = 0.2935990 - 0.0330861 = 0.2605129.
TEST(LambdaMartTest, HandWorkedThreeDocumentsTruncatedAtOne) {
  LambdaMartOptions options;
  options.truncation = 1;
  std::vector<double> h;
  const std::vector<double> g = Derive(options, {0.0, 1.0, 2.0}, &h);
  EXPECT_NEAR(g[0], -0.2935990, 1e-6);
  EXPECT_NEAR(g[1], 0.0330861, 1e-6);
  EXPECT_NEAR(g[2], 0.2605129, 1e-6);
  EXPECT_NEAR(h[0], 0.0349979, 1e-6);
  EXPECT_NEAR(h[1], 0.0241879, 1e-6);
  EXPECT_NEAR(h[2], 0.0349979 + 0.0241879, 1e-6);
}

// Sigma scales lambda by sigma and the hessian by sigma^2 at scores where
// rho is unchanged (scores scaled by 1/sigma).
TEST(LambdaMartTest, SigmaScalesLambdasAndHessians) {
  LambdaMartOptions base;
  base.truncation = 0;
  LambdaMartOptions steep = base;
  steep.sigma = 2.0;
  std::vector<double> h1, h2;
  const std::vector<double> g1 = Derive(base, {0.0, 1.0, 2.0}, &h1);
  const std::vector<double> g2 = Derive(steep, {0.0, 0.5, 1.0}, &h2);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(g2[i], 2.0 * g1[i], 1e-12);
    EXPECT_NEAR(h2[i], 4.0 * h1[i], 1e-12);
  }
}

// Equal scores (the first iteration) rank the worse label first, so the
// relevant document is pushed up: g < 0 for it, and the gradients sum to 0.
TEST(LambdaMartTest, ZeroScoresPushRelevantDocumentsUp) {
  LambdaMartOptions options;
  std::vector<double> h;
  const std::vector<double> g = Derive(options, {0.0, 0.0, 0.0}, &h);
  EXPECT_LT(g[0], g[2]);
  EXPECT_LT(g[2], 0.0);
  EXPECT_GT(g[1], 0.0);
  EXPECT_NEAR(g[0] + g[1] + g[2], 0.0, 1e-12);
  for (double value : h) EXPECT_GT(value, 0.0);
}

}  // namespace
}  // namespace plrank
