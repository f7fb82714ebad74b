// ForestScorer's DenseScorerForest path (64 trees per AVX-512 instruction,
// every node evaluated on per-slot threshold bins, for single documents and
// small batches), bit for bit against the reference walk: every batch size
// around its two-document calls and RapidScorer's 64-document groups, tree
// prefixes across its 64-tree groups, NaNs, infinities, values equal to
// thresholds, zero-as-missing splits, both default directions, slots with
// 255 distinct thresholds, more than 128 slots (the four-register bin
// table), features the model never tests, and the models it must decline.

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

// Empty when this CPU runs DenseScorer, else why not (the kernel's own
// requirement, scoring_kernel.cc).
std::string CpuLacksForDenseScorer() {
  ForestShape any_model;
  any_model.num_trees = 1;
  return GetScoringKernel(ScoringKernelId::kDenseAvx512Vbmi)
      .incompatibility(any_model, CpuFeatures::Detected());
}
bool CpuRunsDenseScorer() { return CpuLacksForDenseScorer().empty(); }

// The DenseScorer path's own tests say so when this CPU cannot run it (the
// other kernels are compared on the same models in scoring_kernels_test.cc).
#define SKIP_WITHOUT_DENSE_SCORER()                                   \
  if (!CpuRunsDenseScorer())                                          \
  GTEST_SKIP() << "dense_avx512_vbmi " << CpuLacksForDenseScorer()

// Forests of 130 trees (two whole 64-tree groups and a partial one) whose
// largest tree has 1, 2, 9, 31 or 32 leaves, single-leaf trees among them,
// with and without zero-as-missing splits, splitting on 9 of 12 declared
// features: every batch size from 1 to 136 (pairs and a single document,
// after 64-document groups or without), tree prefixes inside and across
// groups; the same with the dense path off.
TEST(ForestScorerDenseTest, MatchesReferenceEveryBatchSize) {
  SKIP_WITHOUT_DENSE_SCORER();
  std::mt19937_64 rng(3131);
  const int32_t split_features = 9;
  for (int32_t max_leaves : {1, 2, 9, 31, 32}) {
    for (bool zero_as_missing : {false, true}) {
      Ensemble model =
          testing::RandomEnsemble(rng, 130, max_leaves, split_features);
      model.num_features = 12;
      for (int32_t f = split_features; f < model.num_features; ++f) {
        model.feature_names.push_back("unused_" + std::to_string(f));
      }
      model.trees[0] = testing::RandomTree(rng, max_leaves, split_features);
      model.trees[1] = testing::RandomTree(rng, 1, split_features);
      model.trees[64] = testing::RandomTree(rng, 1, split_features);
      if (zero_as_missing) testing::AddZeroAsMissing(rng, 0.3, &model);
      const std::vector<float> rows = testing::RowsNearZeroWithInfinities(rng, 300, model.num_features);
      for (auto dense : {ForestScorer::DenseScoring::kAllow,
                         ForestScorer::DenseScoring::kOff}) {
        absl::StatusOr<ForestScorer> scorer =
            ForestScorer::Create(model, dense);
        ASSERT_TRUE(scorer.ok()) << scorer.status();
        EXPECT_EQ(scorer->uses_dense_scorer(),
                  dense == ForestScorer::DenseScoring::kAllow &&
                      CpuRunsDenseScorer());
        for (size_t docs = 1; docs <= 136; ++docs) {
          testing::ExpectScoresMatchReference(*scorer, model, rows, docs, 0);
        }
        for (size_t docs :
             {size_t{1}, size_t{2}, size_t{3}, size_t{150}, size_t{300}}) {
          for (int32_t requested : {1, 17, 63, 64, 65, 128}) {
            testing::ExpectScoresMatchReference(*scorer, model, rows, docs,
                                                requested);
          }
        }
      }
    }
  }
}

// A forest testing 100 features with both default directions (about 200
// slots: bins looked up in four registers), where feature 0's
// default-right splits use `distinct` different thresholds, spread
// continuously, and rows that hit those thresholds exactly, fall between
// them, or are missing. 255 distinct thresholds fit a byte's bins; 256 do
// not, and the scorer must decline the dense path yet score the same.
TEST(ForestScorerDenseTest, WideBinTablesAndMostThresholdsPerSlot) {
  SKIP_WITHOUT_DENSE_SCORER();
  for (int32_t distinct : {255, 256}) {
    std::mt19937_64 rng(255 + distinct);
    const int32_t features = 100;
    Ensemble model = testing::RandomEnsemble(rng, 400, 32, features);
    std::vector<float> pool(distinct);
    std::normal_distribution<float> continuous(0.0f, 2.0f);
    for (float& threshold : pool) threshold = continuous(rng);
    int32_t next = 0;
    for (Tree& tree : model.trees) {
      for (int32_t n = 0; n < tree.num_internal_nodes(); ++n) {
        if (n % 3 != 0) {
          // Feature 0 only where its thresholds are set below.
          if (tree.split_feature[n] == 0) tree.split_feature[n] = 1;
          continue;
        }
        tree.split_feature[n] = 0;
        tree.default_left[n] = 0;
        tree.threshold[n] = pool[next++ % distinct];
      }
    }
    ASSERT_GE(next, distinct);
    absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
    ASSERT_TRUE(scorer.ok()) << scorer.status();
    EXPECT_EQ(scorer->uses_dense_scorer(),
              distinct <= 255 && CpuRunsDenseScorer());
    std::vector<float> rows = testing::RowsNearZeroWithInfinities(rng, 200, features);
    std::uniform_int_distribution<int32_t> pick(0, distinct - 1);
    std::bernoulli_distribution exact(0.5);
    for (size_t i = 0; i < rows.size(); i += features) {
      if (std::isnan(rows[i])) continue;
      const float threshold = pool[pick(rng)];
      rows[i] = exact(rng)
                    ? threshold
                    : std::nextafter(threshold, rows[i] < 0 ? -1e9f : 1e9f);
    }
    for (size_t docs : {size_t{1}, size_t{2}, size_t{5}, size_t{10}, size_t{64},
                        size_t{111}, size_t{200}}) {
      for (int32_t requested : {0, 100}) {
        testing::ExpectScoresMatchReference(*scorer, model, rows, docs,
                                            requested);
      }
    }
  }
}

// More than 256 slots tested (140 features, both default directions): the
// dense path declines and the others score alike.
TEST(ForestScorerDenseTest, DeclinesMoreThan256Slots) {
  std::mt19937_64 rng(257);
  const int32_t features = 140;
  Ensemble model = testing::RandomEnsemble(rng, 40, 32, features);
  for (Tree& tree : model.trees) tree = testing::RandomTree(rng, 32, features);
  // Every feature split with both default directions, each by its own node
  // (node i / 40 of tree i % 40).
  for (int32_t i = 0; i < 2 * features; ++i) {
    Tree& tree = model.trees[i % 40];
    tree.split_feature[i / 40] = i / 2;
    tree.default_left[i / 40] = static_cast<uint8_t>(i % 2);
  }
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  EXPECT_FALSE(scorer->uses_dense_scorer());
  const std::vector<float> rows = testing::RowsNearZeroWithInfinities(rng, 20, features);
  for (size_t docs : {size_t{1}, size_t{2}, size_t{20}}) {
    testing::ExpectScoresMatchReference(*scorer, model, rows, docs, 0);
  }
}

}  // namespace
}  // namespace plrank
