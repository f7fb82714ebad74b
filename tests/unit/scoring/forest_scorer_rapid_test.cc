// ForestScorer's RapidScorer path (64-document AVX-512 QuickScorer for trees
// of up to 64 leaves, ahead of the 16-document QuickScorer for up to 32),
// bit for bit against the reference walk: every batch size around its
// 64-document groups and padded remainders, tree-count prefixes, NaNs,
// infinities, values at the thresholds, zero-as-missing splits and both
// default directions, and models it must not take.

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/model/ensemble.h"
#include "core/cpu/cpu_features.h"
#include "core/scoring/forest_scorer.h"
#include "core/scoring/scoring_kernel.h"
#include "gtest/gtest.h"
#include "tests/testing/random_model.h"
#include "tests/testing/scorer_reference.h"

namespace plrank {
namespace {

// Empty when this CPU runs RapidScorer, else why not (the kernel's own
// requirement, scoring_kernel.cc).
std::string CpuLacksForRapidScorer() {
  ForestShape any_model;
  any_model.num_trees = 1;
  return GetScoringKernel(ScoringKernelId::kRapidAvx512)
      .incompatibility(any_model, CpuFeatures::Detected());
}
bool CpuRunsRapidScorer() { return CpuLacksForRapidScorer().empty(); }

// The RapidScorer path's own tests say so when this CPU cannot run it (the
// other kernels are compared on the same models in scoring_kernels_test.cc).
#define SKIP_WITHOUT_RAPID_SCORER()                                   \
  if (!CpuRunsRapidScorer())                                          \
  GTEST_SKIP() << "rapid_avx512 " << CpuLacksForRapidScorer()

// Forests whose largest tree has 1, 8, 9, 31, 32, 33, 57 and 64 leaves (one
// to eight bitvector bytes, left-subtree ranges across byte bounds), with
// single-leaf and full-size trees among them, with and without
// zero-as-missing splits: every batch size from 1 to 140 (whole 64-document
// groups, remainders padded, left to QuickScorer or walked, across the
// document block of ForestScorer::kBlockDocs) and a few larger ones.
TEST(ForestScorerRapidTest, MatchesReferenceEveryBatchSize) {
  SKIP_WITHOUT_RAPID_SCORER();
  std::mt19937_64 rng(6464);
  const int32_t features = 7;
  for (int32_t max_leaves : {1, 8, 9, 31, 32, 33, 57, 64}) {
    for (bool zero_as_missing : {false, true}) {
      Ensemble model = testing::RandomEnsemble(rng, 90, max_leaves, features);
      model.trees[0] = testing::RandomTree(rng, max_leaves, features);
      model.trees[1] = testing::RandomTree(rng, 1, features);
      if (zero_as_missing) testing::AddZeroAsMissing(rng, 0.3, &model);
      const std::vector<float> rows = testing::RowsNearZeroWithInfinities(
          rng, ForestScorer::kBlockDocs + 100, features);
      // Remainders go to the dense path (up to 32 leaves) or, with it off,
      // to QuickScorer and the walks.
      for (auto dense : {ForestScorer::DenseScoring::kAllow,
                         ForestScorer::DenseScoring::kOff}) {
        absl::StatusOr<ForestScorer> scorer =
            ForestScorer::Create(model, dense);
        ASSERT_TRUE(scorer.ok()) << scorer.status();
        EXPECT_EQ(scorer->uses_rapid_scorer(), CpuRunsRapidScorer());
        for (size_t docs = 1; docs <= 140; ++docs) {
          testing::ExpectScoresMatchReference(*scorer, model, rows, docs, 0);
        }
        for (size_t docs :
             {size_t{191}, size_t{400}, ForestScorer::kBlockDocs + 1,
              ForestScorer::kBlockDocs + 100}) {
          for (int32_t requested : {0, 1, 17, 70}) {
            testing::ExpectScoresMatchReference(*scorer, model, rows, docs,
                                                requested);
          }
        }
      }
    }
  }
}

// Many trees of up to 64 leaves (several tree blocks), thresholds both on
// the grid (many equal thresholds per feature, merged) and continuous.
TEST(ForestScorerRapidTest, ManyBlocksAndContinuousThresholds) {
  SKIP_WITHOUT_RAPID_SCORER();
  std::mt19937_64 rng(255);
  const int32_t features = 20;
  Ensemble model = testing::RandomEnsemble(rng, 1100, 64, features);
  std::normal_distribution<float> continuous(0.0f, 1.0f);
  for (size_t t = 0; t < model.trees.size(); t += 2) {
    for (float& threshold : model.trees[t].threshold) {
      threshold = continuous(rng);
    }
  }
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  EXPECT_EQ(scorer->uses_rapid_scorer(), CpuRunsRapidScorer());
  std::vector<float> rows = testing::RowsNearZeroWithInfinities(rng, 300, features);
  for (size_t i = 0; i < rows.size(); i += 3) {
    if (!std::isnan(rows[i])) rows[i] = continuous(rng);
  }
  for (size_t docs : {size_t{1}, size_t{10}, size_t{64}, size_t{100},
                      size_t{129}, size_t{300}}) {
    for (int32_t requested : {0, 150, 600}) {
      testing::ExpectScoresMatchReference(*scorer, model, rows, docs,
                                          requested);
    }
  }
}

// Models RapidScorer must leave to QuickScorerForest and the walks: more
// than 64 leaves, more than one output.
TEST(ForestScorerRapidTest, NotUsedOutsideItsRange) {
  std::mt19937_64 rng(7);
  const int32_t features = 5;
  Ensemble big = testing::RandomEnsemble(rng, 4, 40, features);
  big.trees[2] = testing::RandomTree(rng, 65, features);
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(big);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  EXPECT_FALSE(scorer->uses_rapid_scorer());
  const std::vector<float> rows = testing::RowsNearZeroWithInfinities(rng, 70, features);
  testing::ExpectScoresMatchReference(*scorer, big, rows, 70, 0);

  Ensemble two = testing::RandomEnsemble(rng, 5, 32, features, 2);
  scorer = ForestScorer::Create(two);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  EXPECT_FALSE(scorer->uses_rapid_scorer());
}

}  // namespace
}  // namespace plrank
