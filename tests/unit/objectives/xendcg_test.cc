// XE-NDCG ("xendcg"): the per-query kernel against hand-computed values and
// LightGBM's original formulation, its first-order part and hessian against
// finite differences of the cross entropy, and the randomness of the gammas
// (reproducible, fresh every iteration, independent of the thread count).

#include "core/objectives/xendcg.h"

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/data/random.h"
#include "core/objectives/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/pl_test_util.h"

namespace plrank {
namespace {

using testing::MakeDataset;

// Random queries with labels in [0, 3], then an all-zero query, a single
// document query and an all-ones query (which is NOT skipped: phi is still
// a valid, if noisy, target).
Dataset RandomDataset(uint64_t seed, int num_queries, int max_size) {
  SplitMix64 rng(seed);
  std::vector<std::vector<int32_t>> labels(num_queries);
  for (auto& query : labels) {
    const int size = 2 + static_cast<int>(rng.BelowUnbiased(max_size - 1));
    for (int i = 0; i < size; ++i) {
      query.push_back(static_cast<int32_t>(rng.BelowUnbiased(4)));
    }
    query[0] = 1;  // at least one relevant document: never skipped
  }
  labels.push_back({0, 0, 0, 0});
  labels.push_back({2});
  labels.push_back({1, 1, 1});
  return MakeDataset(labels);
}

std::vector<double> RandomScores(uint64_t seed, size_t n, double scale) {
  SplitMix64 rng(seed);
  std::vector<double> scores(n);
  for (double& s : scores) {
    s = scale * (2.0 * static_cast<double>(rng.Next() >> 11) * 0x1.0p-53 - 1.0);
  }
  return scores;
}

struct Derivatives {
  std::vector<double> gradients;
  std::vector<double> hessians;
};

Derivatives Kernel(const std::vector<double>& scores,
                   const std::vector<double>& phi, bool corrections = true) {
  Derivatives d{std::vector<double>(scores.size()),
                std::vector<double>(scores.size())};
  std::vector<double> work(2 * scores.size());
  XendcgObjective::QueryGradients(scores, phi, absl::MakeSpan(d.gradients),
                                  absl::MakeSpan(d.hessians),
                                  absl::MakeSpan(work), corrections);
  return d;
}

struct FloatDerivatives {
  std::vector<float> gradients;
  std::vector<float> hessians;
};

FloatDerivatives Compute(XendcgObjective& objective,
                         const std::vector<double>& scores,
                         const std::vector<uint8_t>& in_bag = {}) {
  FloatDerivatives d{std::vector<float>(scores.size(), -99.0f),
                     std::vector<float>(scores.size(), -99.0f)};
  objective.ComputeGradients(scores, in_bag, absl::MakeSpan(d.gradients),
                             absl::MakeSpan(d.hessians));
  return d;
}

// LightGBM's first rank_xendcg (O(n^2), 1 - rho taken literally), in long
// double: an independent reference for moderate score gaps.
Derivatives LightGbmReference(const std::vector<double>& scores,
                              const std::vector<double>& phi) {
  const size_t n = scores.size();
  long double top = scores[0];
  for (double s : scores) top = std::max<long double>(top, s);
  std::vector<long double> rho(n);
  long double total = 0.0L;
  for (size_t i = 0; i < n; ++i) total += rho[i] = std::exp(scores[i] - top);
  long double phi_sum = 0.0L;
  for (size_t i = 0; i < n; ++i) {
    rho[i] /= total;
    phi_sum += phi[i];
  }
  std::vector<long double> l1(n), l2(n, 0.0L), l3(n, 0.0L);
  for (size_t i = 0; i < n; ++i) l1[i] = -phi[i] / phi_sum + rho[i];
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (j != i) l2[i] += l1[j] / (1.0L - rho[j]);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (j != i) l3[i] += rho[j] * l2[j] / (1.0L - rho[j]);
    }
  }
  Derivatives d{std::vector<double>(n), std::vector<double>(n)};
  for (size_t i = 0; i < n; ++i) {
    d.gradients[i] =
        static_cast<double>(l1[i] + rho[i] * l2[i] + rho[i] * l3[i]);
    d.hessians[i] = static_cast<double>(rho[i] * (1.0L - rho[i]));
  }
  return d;
}

std::unique_ptr<XendcgObjective> MakeInitialized(const Dataset& data,
                                                 uint64_t seed) {
  auto objective = std::make_unique<XendcgObjective>();
  const absl::Status status = objective->Init(data, seed);
  EXPECT_TRUE(status.ok()) << status;
  return objective;
}

TEST(XendcgKernelTest, TwoEqualScoresByHand) {
  // rho = (1/2, 1/2), phi / sum = (3/4, 1/4): l1 = (-1/4, 1/4),
  // p = (-1/2, 1/2), l2 = (1/4, -1/4), q = (1/2, -1/2), l3 = (-1/4, 1/4).
  const Derivatives d = Kernel({0.0, 0.0}, {3.0, 1.0});
  EXPECT_DOUBLE_EQ(d.gradients[0], -0.25);
  EXPECT_DOUBLE_EQ(d.gradients[1], 0.25);
  EXPECT_DOUBLE_EQ(d.hessians[0], 0.25);
  EXPECT_DOUBLE_EQ(d.hessians[1], 0.25);
}

TEST(XendcgKernelTest, ThreeDocumentsByHand) {
  // exps (2, 1, 1): rho = (1/2, 1/4, 1/4), 1 - rho = (1/2, 3/4, 3/4).
  // phi / sum = (1, 3, 4) / 8: l1 = (3/8, -1/8, -1/4).
  // p = (3/4, -1/6, -1/3), sum 1/4: l2 = (-1/4, 5/48, 7/48).
  // q = (-1/2, 5/36, 7/36), sum -1/6: l3 = (1/6, -11/144, -13/144).
  const std::vector<double> scores = {std::log(2.0), 0.0, 0.0};
  const std::vector<double> phi = {1.0, 3.0, 4.0};
  const Derivatives d = Kernel(scores, phi);
  EXPECT_NEAR(d.gradients[0], 7.0 / 24.0, 1e-15);
  EXPECT_NEAR(d.gradients[1], -7.0 / 72.0, 1e-15);
  EXPECT_NEAR(d.gradients[2], -7.0 / 36.0, 1e-15);
  EXPECT_NEAR(d.hessians[0], 1.0 / 4.0, 1e-15);
  EXPECT_NEAR(d.hessians[1], 3.0 / 16.0, 1e-15);
  EXPECT_NEAR(d.hessians[2], 3.0 / 16.0, 1e-15);
  const Derivatives first = Kernel(scores, phi, /*corrections=*/false);
  EXPECT_NEAR(first.gradients[0], 3.0 / 8.0, 1e-15);
  EXPECT_NEAR(first.gradients[1], -1.0 / 8.0, 1e-15);
  EXPECT_NEAR(first.gradients[2], -1.0 / 4.0, 1e-15);
  EXPECT_EQ(first.hessians, d.hessians);
}

TEST(XendcgKernelTest, MatchesLightGbmsOriginalFormulation) {
  SplitMix64 rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 2 + rng.BelowUnbiased(30);
    const double scale = trial % 2 == 0 ? 1.0 : 12.0;
    const std::vector<double> scores = RandomScores(100 + trial, n, scale);
    std::vector<double> phi(n);
    for (double& p : phi) {
      p = std::ldexp(1.0, static_cast<int>(rng.BelowUnbiased(4))) -
          static_cast<double>(rng.Next() >> 11) * 0x1.0p-53;
    }
    const Derivatives d = Kernel(scores, phi);
    const Derivatives reference = LightGbmReference(scores, phi);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_NEAR(d.gradients[i], reference.gradients[i],
                  1e-12 * (1.0 + std::abs(reference.gradients[i])))
          << "trial " << trial << " document " << i;
      EXPECT_NEAR(d.hessians[i], reference.hessians[i],
                  1e-13 * reference.hessians[i] + 1e-300)
          << "trial " << trial << " document " << i;
    }
  }
}

TEST(XendcgKernelTest, GradientsSumToZero) {
  // sum l1 = 0, and sum_i l_{k+1,i} = sum_i l_{k,i} / (1 - rho_i) (1 - rho_i).
  for (double scale : {0.5, 5.0, 30.0, 400.0}) {
    const std::vector<double> scores = RandomScores(3, 12, scale);
    std::vector<double> phi(12);
    for (size_t i = 0; i < phi.size(); ++i) phi[i] = 0.25 + (i % 4);
    const Derivatives d = Kernel(scores, phi);
    double sum = 0.0, magnitude = 0.0;
    for (size_t i = 0; i < phi.size(); ++i) {
      ASSERT_TRUE(std::isfinite(d.gradients[i])) << scale;
      ASSERT_TRUE(std::isfinite(d.hessians[i])) << scale;
      EXPECT_GE(d.hessians[i], 0.0);
      sum += d.gradients[i];
      magnitude += std::abs(d.gradients[i]);
    }
    EXPECT_GT(magnitude, 0.0);
    EXPECT_NEAR(sum, 0.0, 1e-12 * (1.0 + magnitude)) << scale;
  }
}

TEST(XendcgKernelTest, StaysFiniteWhereOneDocumentTakesAllTheMass) {
  // A gap of 40 makes 1 - rho of the top document round to 0 when taken
  // literally (LightGBM: NaN). The approximation itself has a finite limit
  // (e.g. l2_i -> l1_top * rho_i / (1 - rho_top) for the others, a share of
  // the rest), so the gradients must be finite, sum to 0 and barely move
  // between gaps 39 and 40.
  const std::vector<double> phi = {1.5, 3.5, 0.5};
  const Derivatives at40 = Kernel({40.0, 0.0, -1.0}, phi);
  const Derivatives at39 = Kernel({39.0, 0.0, -1.0}, phi);
  double sum = 0.0;
  for (size_t i = 0; i < phi.size(); ++i) {
    ASSERT_TRUE(std::isfinite(at40.gradients[i]));
    sum += at40.gradients[i];
    EXPECT_NEAR(at40.gradients[i], at39.gradients[i], 1e-6) << i;
  }
  EXPECT_NEAR(sum, 0.0, 1e-12);
  EXPECT_GT(at40.hessians[1], 0.0);
}

// The cross entropy -sum (phi_i / sum phi) log softmax(s)_i at fixed phi.
double CrossEntropy(const std::vector<double>& scores,
                    const std::vector<double>& phi) {
  double top = scores[0], phi_sum = 0.0;
  for (double s : scores) top = std::max(top, s);
  double total = 0.0;
  for (size_t i = 0; i < scores.size(); ++i) {
    total += std::exp(scores[i] - top);
    phi_sum += phi[i];
  }
  double loss = 0.0;
  for (size_t i = 0; i < scores.size(); ++i) {
    loss -= phi[i] / phi_sum * (scores[i] - top - std::log(total));
  }
  return loss;
}

TEST(XendcgKernelTest, FirstOrderPartIsTheCrossEntropyGradient) {
  SplitMix64 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    const size_t n = 2 + rng.BelowUnbiased(10);
    std::vector<double> scores = RandomScores(50 + trial, n, 2.0);
    std::vector<double> phi(n);
    for (double& p : phi) {
      p = std::ldexp(1.0, static_cast<int>(rng.BelowUnbiased(3))) -
          static_cast<double>(rng.Next() >> 11) * 0x1.0p-53;
    }
    const Derivatives d = Kernel(scores, phi, /*corrections=*/false);
    const double loss = CrossEntropy(scores, phi);
    for (size_t i = 0; i < n; ++i) {
      const double saved = scores[i];
      scores[i] = saved + 1e-5;
      const double plus = CrossEntropy(scores, phi);
      scores[i] = saved - 1e-5;
      const double minus = CrossEntropy(scores, phi);
      scores[i] = saved + 1e-3;
      const double far_plus = CrossEntropy(scores, phi);
      scores[i] = saved - 1e-3;
      const double far_minus = CrossEntropy(scores, phi);
      scores[i] = saved;
      EXPECT_NEAR(d.gradients[i], (plus - minus) / 2e-5, 1e-8);
      // rho (1 - rho) is the exact diagonal since the target sums to 1.
      EXPECT_NEAR(d.hessians[i], (far_plus - 2.0 * loss + far_minus) / 1e-6,
                  1e-5);
    }
  }
}

TEST(XendcgObjectiveTest, LossIsTheCrossEntropyAtHalfGamma) {
  const Dataset data = RandomDataset(2, 6, 8);
  std::unique_ptr<XendcgObjective> objective = MakeInitialized(data, 1);
  std::vector<double> scores = RandomScores(4, data.num_documents(), 1.5);
  double expected = 0.0;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    if (objective->Skipped(q)) continue;
    std::vector<double> s, phi;
    for (uint32_t i = data.query_begin(q); i < data.query_end(q); ++i) {
      s.push_back(scores[i]);
      phi.push_back(std::ldexp(1.0, data.labels[i]) - 0.5);
    }
    expected += CrossEntropy(s, phi);
  }
  EXPECT_NEAR(objective->Loss(scores), expected, 1e-12 * expected);

  // Its gradient is the kernel's first-order part with phi = 2^label - 1/2.
  for (size_t q = 0; q < data.num_queries(); ++q) {
    const uint32_t begin = data.query_begin(q);
    const uint32_t n = data.query_end(q) - begin;
    std::vector<double> s(scores.begin() + begin, scores.begin() + begin + n);
    std::vector<double> phi;
    for (uint32_t i = begin; i < begin + n; ++i) {
      phi.push_back(std::ldexp(1.0, data.labels[i]) - 0.5);
    }
    const Derivatives d = Kernel(s, phi, /*corrections=*/false);
    for (uint32_t i = 0; i < n; ++i) {
      const double saved = scores[begin + i];
      scores[begin + i] = saved + 1e-5;
      const double plus = objective->Loss(scores);
      scores[begin + i] = saved - 1e-5;
      const double minus = objective->Loss(scores);
      scores[begin + i] = saved;
      const double expected_gradient =
          objective->Skipped(q) ? 0.0 : d.gradients[i];
      EXPECT_NEAR((plus - minus) / 2e-5, expected_gradient, 1e-8)
          << "query " << q << " document " << i;
    }
  }
}

TEST(XendcgObjectiveTest, GammasAreUniformAndComputeGradientsUsesThem) {
  const Dataset data = RandomDataset(6, 10, 12);
  std::unique_ptr<XendcgObjective> objective = MakeInitialized(data, 42);
  const std::vector<double> scores = RandomScores(8, data.num_documents(), 1.0);
  for (uint64_t iteration = 0; iteration < 3; ++iteration) {
    ASSERT_EQ(objective->iteration(), iteration);
    const FloatDerivatives d = Compute(*objective, scores);
    for (size_t q = 0; q < data.num_queries(); ++q) {
      const uint32_t begin = data.query_begin(q);
      const uint32_t n = data.query_end(q) - begin;
      std::vector<double> phi(n);
      objective->DrawPhi(q, iteration, absl::MakeSpan(phi));
      for (uint32_t i = 0; i < n; ++i) {
        const double power = std::ldexp(1.0, data.labels[begin + i]);
        EXPECT_LE(phi[i], power);
        EXPECT_GT(phi[i], power - 1.0);
      }
      if (objective->Skipped(q)) continue;
      const std::vector<double> s(scores.begin() + begin,
                                  scores.begin() + begin + n);
      const Derivatives expected = Kernel(s, phi);
      for (uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(d.gradients[begin + i],
                  static_cast<float>(expected.gradients[i]));
        EXPECT_EQ(d.hessians[begin + i],
                  static_cast<float>(expected.hessians[i]));
      }
    }
  }
}

TEST(XendcgObjectiveTest, SameSeedSameGradientsNewGammasEveryIteration) {
  const Dataset data = RandomDataset(9, 20, 10);
  std::unique_ptr<XendcgObjective> a = MakeInitialized(data, 7);
  std::unique_ptr<XendcgObjective> b = MakeInitialized(data, 7);
  std::unique_ptr<XendcgObjective> other_seed = MakeInitialized(data, 8);
  const std::vector<double> scores = RandomScores(1, data.num_documents(), 1.0);
  std::vector<std::vector<float>> per_iteration;
  for (int iteration = 0; iteration < 3; ++iteration) {
    const FloatDerivatives da = Compute(*a, scores);
    const FloatDerivatives db = Compute(*b, scores);
    const FloatDerivatives dc = Compute(*other_seed, scores);
    EXPECT_EQ(da.gradients, db.gradients);
    EXPECT_EQ(da.hessians, db.hessians);
    EXPECT_NE(da.gradients, dc.gradients);
    per_iteration.push_back(da.gradients);
  }
  // Same scores, new iteration: new gammas, so new gradients.
  EXPECT_NE(per_iteration[0], per_iteration[1]);
  EXPECT_NE(per_iteration[1], per_iteration[2]);
  // And every document's gamma changes, not just a few.
  size_t changed = 0, total = 0;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    const uint32_t n = data.query_end(q) - data.query_begin(q);
    std::vector<double> first(n), second(n);
    a->DrawPhi(q, 0, absl::MakeSpan(first));
    a->DrawPhi(q, 1, absl::MakeSpan(second));
    for (uint32_t i = 0; i < n; ++i) changed += first[i] != second[i];
    total += n;
  }
  EXPECT_EQ(changed, total);
}

TEST(XendcgObjectiveTest, BitwiseIdenticalWithOneAndThreeThreads) {
  const Dataset data = RandomDataset(8, 300, 40);
  std::unique_ptr<XendcgObjective> one = MakeInitialized(data, 3);
  std::unique_ptr<XendcgObjective> three = MakeInitialized(data, 3);
  const std::vector<double> scores = RandomScores(6, data.num_documents(), 2.0);
  const int saved_threads = omp_get_max_threads();
  for (int iteration = 0; iteration < 3; ++iteration) {
    omp_set_num_threads(1);
    const FloatDerivatives d1 = Compute(*one, scores);
    const double loss1 = one->Loss(scores);
    omp_set_num_threads(3);
    const FloatDerivatives d3 = Compute(*three, scores);
    const double loss3 = three->Loss(scores);
    EXPECT_EQ(d1.gradients, d3.gradients) << iteration;
    EXPECT_EQ(d1.hessians, d3.hessians) << iteration;
    EXPECT_EQ(loss1, loss3);
  }
  omp_set_num_threads(saved_threads);
}

TEST(XendcgObjectiveTest, SkippedAndOutOfBagQueriesGetZeros) {
  const Dataset data = RandomDataset(4, 8, 8);
  std::unique_ptr<XendcgObjective> all = MakeInitialized(data, 11);
  std::unique_ptr<XendcgObjective> bagged = MakeInitialized(data, 11);
  const size_t num_queries = data.num_queries();
  // The three extra queries: all-zero labels and one document are skipped,
  // all ones is not.
  EXPECT_TRUE(all->Skipped(num_queries - 3));
  EXPECT_TRUE(all->Skipped(num_queries - 2));
  EXPECT_FALSE(all->Skipped(num_queries - 1));
  const std::vector<double> scores = RandomScores(2, data.num_documents(), 1.0);
  std::vector<uint8_t> in_bag(num_queries, 1);
  in_bag[1] = 0;
  in_bag[4] = 0;
  for (int iteration = 0; iteration < 2; ++iteration) {
    const FloatDerivatives d_all = Compute(*all, scores);
    const FloatDerivatives d_bag = Compute(*bagged, scores, in_bag);
    for (size_t q = 0; q < num_queries; ++q) {
      double magnitude = 0.0;
      double sum = 0.0;
      for (uint32_t i = data.query_begin(q); i < data.query_end(q); ++i) {
        if (in_bag[q]) {
          EXPECT_EQ(d_bag.gradients[i], d_all.gradients[i]);
          EXPECT_EQ(d_bag.hessians[i], d_all.hessians[i]);
        } else {
          EXPECT_EQ(d_bag.gradients[i], 0.0f);
          EXPECT_EQ(d_bag.hessians[i], 0.0f);
        }
        magnitude += std::abs(d_all.gradients[i]) + d_all.hessians[i];
        sum += d_all.gradients[i];
      }
      if (all->Skipped(q)) {
        EXPECT_EQ(magnitude, 0.0) << "query " << q;
      } else {
        EXPECT_GT(magnitude, 0.0) << "query " << q;
        EXPECT_NEAR(sum, 0.0, 1e-6) << "query " << q;
      }
    }
  }
}

TEST(XendcgObjectiveTest, RegisteredAsXendcg) {
  EXPECT_THAT(TreeObjectives(), ::testing::Contains("xendcg"));
  ObjectiveOptions options;
  options.name = "xendcg";
  absl::StatusOr<std::unique_ptr<Objective>> objective = MakeObjective(options);
  ASSERT_TRUE(objective.ok()) << objective.status();
  EXPECT_EQ((*objective)->name(), "xendcg");
  const Dataset data = MakeDataset({{2, 0, 1}, {0, 0}, {1}});
  ASSERT_TRUE((*objective)->Init(data, 0).ok());
  EXPECT_THAT((*objective)->Describe(),
              ::testing::ElementsAre(::testing::HasSubstr("2 of 3 queries")));
}

TEST(XendcgObjectiveTest, RejectsNegativeLabels) {
  XendcgObjective objective;
  EXPECT_FALSE(objective.Init(MakeDataset({{1, -1}}), 0).ok());
}

}  // namespace
}  // namespace plrank
