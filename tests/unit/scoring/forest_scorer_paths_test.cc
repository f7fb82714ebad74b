// ForestScorer's batch-size-dependent paths, bit for bit against the
// reference: 16-document AVX-512 QuickScorer groups and their padded
// remainders (with the dense path off, or with several outputs), 8-document
// AVX2 groups, and small batches walking several trees per document at once.

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/model/ensemble.h"
#include "core/cpu/cpu_features.h"
#include "core/scoring/forest_scorer.h"
#include "gtest/gtest.h"
#include "tests/testing/random_model.h"

namespace plrank {
namespace {

// RawScores of docs [0, docs) with `requested` trees (rounded up to whole
// iterations) against the reference, bit for bit.
void ExpectRawMatches(const ForestScorer& scorer, const Ensemble& model,
                      const std::vector<float>& rows, size_t docs,
                      int32_t requested) {
  const int32_t outputs = model.num_outputs;
  std::vector<double> raw(docs * outputs);
  scorer.RawScores(absl::MakeConstSpan(rows).subspan(
                       0, docs * static_cast<size_t>(model.num_features)),
                   docs, absl::MakeSpan(raw), requested);
  size_t used = model.trees.size();
  if (requested > 0) {
    used =
        std::min<size_t>(used, (requested + outputs - 1) / outputs * outputs);
  }
  for (size_t i = 0; i < docs; ++i) {
    for (int32_t k = 0; k < outputs; ++k) {
      const double expected = testing::ReferenceRaw(
          model, &rows[i * model.num_features], k, used);
      const double actual = raw[k * docs + i];
      EXPECT_EQ(std::memcmp(&expected, &actual, sizeof(double)), 0)
          << "batch " << docs << " doc " << i << " output " << k
          << ": expected " << expected << " got " << actual;
    }
  }
}

// Documents [0, docs) of `rows` scored one at a time through Score (a
// request of one document), each equal to the reference bit for bit; a
// failure names `context` and the document. Single-output models.
void ExpectSingleDocumentsMatch(const ForestScorer& scorer,
                                const Ensemble& model,
                                const std::vector<float>& rows, size_t docs,
                                const std::string& context) {
  const size_t features = static_cast<size_t>(model.num_features);
  for (size_t i = 0; i < docs; ++i) {
    double score = 0;
    scorer.Score(absl::MakeConstSpan(&rows[i * features], features), 1,
                 absl::MakeSpan(&score, 1));
    const double expected = testing::ReferenceRaw(model, &rows[i * features], 0,
                                                  model.trees.size());
    EXPECT_EQ(std::memcmp(&expected, &score, sizeof(double)), 0)
        << context << "doc " << i;
  }
}

// Every batch size from 1 to 40 (16-document groups, a padded remainder or
// an 8-document group plus walks), and sizes across the document block
// (ForestScorer::kBlockDocs),
// for QuickScorer models with one and three outputs, with and without
// zero-as-missing splits; trees from a single leaf to all 32.
TEST(ForestScorerPathsTest, QuickScorerEveryBatchRemainder) {
  std::mt19937_64 rng(4242);
  const int32_t features = 9;
  for (int32_t outputs : {1, 3}) {
    for (bool zero_as_missing : {false, true}) {
      Ensemble model =
          testing::RandomEnsemble(rng, 150, 32, features, outputs);
      model.trees[1] = testing::RandomTree(rng, 32, features);
      model.trees[2] = testing::RandomTree(rng, 1, features);
      if (zero_as_missing) testing::AddZeroAsMissing(rng, 0.4, &model);
      constexpr size_t kBlock = ForestScorer::kBlockDocs;
      const size_t max_docs = 2 * kBlock + 44;
      const std::vector<float> rows =
          testing::RowsNearZero(rng, max_docs, features, 0.2);
      // With the dense path off, single-output batches take QuickScorer
      // too (forest_scorer_dense_test.cc covers the dense path).
      for (auto dense : {ForestScorer::DenseScoring::kAllow,
                         ForestScorer::DenseScoring::kOff}) {
        absl::StatusOr<ForestScorer> scorer =
            ForestScorer::Create(model, dense);
        ASSERT_TRUE(scorer.ok()) << scorer.status();
        EXPECT_EQ(scorer->uses_quick_scorer(),
                  CpuFeatures::Detected().avx2);
        for (size_t docs = 1; docs <= 40; ++docs) {
          ExpectRawMatches(*scorer, model, rows, docs, 0);
        }
        for (size_t docs :
             {kBlock - 1, kBlock, kBlock + 1, kBlock + 13, max_docs}) {
          for (int32_t requested : {0, 7 * outputs}) {
            ExpectRawMatches(*scorer, model, rows, docs, requested);
          }
        }
      }
    }
  }
}

// Single documents and tiny batches on models QuickScorer does not take:
// trees of up to 64 leaves (many trees per tree block), up to 100 and up to
// 255 leaves (few trees per block, several blocks), with
// single-leaf trees among them, one and two outputs, NaNs and
// zero-as-missing splits, and tree-count prefixes.
TEST(ForestScorerPathsTest, SmallBatchWalksMatchReference) {
  std::mt19937_64 rng(9191);
  const int32_t features = 8;
  for (int32_t max_leaves : {64, 100, 255}) {
    for (int32_t outputs : {1, 2}) {
      Ensemble model =
          testing::RandomEnsemble(rng, 60, max_leaves, features, outputs);
      model.trees[0] = testing::RandomTree(rng, max_leaves, features);
      model.trees[3] = testing::RandomTree(rng, 1, features);
      testing::AddZeroAsMissing(rng, 0.2, &model);
      absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
      ASSERT_TRUE(scorer.ok()) << scorer.status();
      EXPECT_FALSE(scorer->uses_quick_scorer());
      const std::vector<float> rows =
          testing::RowsNearZero(rng, 40, features, 0.25);
      for (size_t docs = 1; docs <= 9; ++docs) {
        for (int32_t requested : {0, 1, 17 * outputs, 41 * outputs}) {
          ExpectRawMatches(*scorer, model, rows, docs, requested);
        }
      }
      // One document at a time through Score, as a request of one would.
      if (outputs == 1)
        ExpectSingleDocumentsMatch(*scorer, model, rows, 40, "");
    }
  }
}

// Single documents through the lane chains (single output, trees the dense
// path does not take, or dense off): fewer trees than lanes, exactly 8, 9
// and many (several tree blocks), single-leaf trees, deep trees, NaNs and
// zero-as-missing splits, batches ending in one document after groups of
// 8, and tree prefixes (which walk in lockstep instead).
TEST(ForestScorerPathsTest, LaneChainsMatchReference) {
  std::mt19937_64 rng(8888);
  const int32_t features = 6;
  for (int32_t iterations : {1, 3, 8, 9, 200}) {
    for (int32_t max_leaves : {1, 20, 255}) {
      Ensemble model =
          testing::RandomEnsemble(rng, iterations, max_leaves, features);
      model.trees[0] = testing::RandomTree(rng, max_leaves, features);
      if (iterations > 2)
        model.trees[2] = testing::RandomTree(rng, 1, features);
      testing::AddZeroAsMissing(rng, 0.2, &model);
      // 20-leaf trees take the dense path unless it is off.
      absl::StatusOr<ForestScorer> scorer =
          ForestScorer::Create(model, ForestScorer::DenseScoring::kOff);
      ASSERT_TRUE(scorer.ok()) << scorer.status();
      const std::vector<float> rows =
          testing::RowsNearZero(rng, 40, features, 0.25);
      for (size_t docs : {size_t{1}, size_t{9}, size_t{17}, size_t{33}}) {
        for (int32_t requested : {0, iterations / 2}) {
          ExpectRawMatches(*scorer, model, rows, docs, requested);
        }
      }
      ExpectSingleDocumentsMatch(
          *scorer, model, rows, 40,
          absl::StrCat(iterations, " x ", max_leaves, " "));
    }
  }
}

// A model whose trees are all single leaves has no feature slots, so its
// doubled rows are empty; scored first on a fresh thread (whose scratch for
// rows was never grown), every path must still score it like the
// reference. The fuzz target lightgbm_import found the scratch pointer null
// there (clang's UBSan: offset applied to a null pointer); that finding is
// its seed regression-all-leaf-model-no-slots, as this test cannot see the
// pointer.
TEST(ForestScorerPathsTest, AllLeafModelsScoreOnAFreshThread) {
  std::mt19937_64 rng(4242);
  const int32_t features = 3;
  for (const int32_t iterations : {1, 9, 40}) {
    Ensemble model = testing::RandomEnsemble(rng, iterations, 1, features);
    for (const auto dense : {ForestScorer::DenseScoring::kAllow,
                             ForestScorer::DenseScoring::kOff}) {
      absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model, dense);
      ASSERT_TRUE(scorer.ok()) << scorer.status();
      ASSERT_EQ(scorer->num_trees(), iterations);
      const std::vector<float> rows =
          testing::RowsNearZero(rng, 200, features, 0.25);
      for (const size_t docs : {1, 2, 9, 33, 200}) {
        std::thread fresh([&] {
          ExpectRawMatches(*scorer, model, rows, docs, 0);
          ExpectSingleDocumentsMatch(*scorer, model, rows, 3,
                                     absl::StrCat(iterations, " leaves "));
        });
        fresh.join();
      }
    }
  }
}

// A thread's scratch for rows is sized by the first request it scores (its
// documents rounded up to 64, not a whole block), so each batch here runs on
// a fresh thread: every path's padding (RapidScorer to 64 documents,
// QuickScorer to 16, chained remainders to 8) must stay inside it, and the
// scores must match the reference. Under AddressSanitizer a write past the
// scratch fails this test.
TEST(ForestScorerPathsTest, ScratchSizedByTheRequestOnAFreshThread) {
  std::mt19937_64 rng(6060);
  const int32_t features = 6;
  const size_t max_docs = ForestScorer::kBlockDocs + 40;
  const std::vector<float> rows =
      testing::RowsNearZero(rng, max_docs, features, 0.25);
  for (const int32_t max_leaves : {20, 32, 64, 255}) {
    Ensemble model = testing::RandomEnsemble(rng, 70, max_leaves, features);
    model.trees[0] = testing::RandomTree(rng, max_leaves, features);
    for (const auto dense : {ForestScorer::DenseScoring::kAllow,
                             ForestScorer::DenseScoring::kOff}) {
      absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model, dense);
      ASSERT_TRUE(scorer.ok()) << scorer.status();
      for (const size_t docs :
           {size_t{1}, size_t{5}, size_t{36}, size_t{40}, size_t{63},
            size_t{65}, size_t{100}, max_docs}) {
        std::thread fresh(
            [&] { ExpectRawMatches(*scorer, model, rows, docs, 0); });
        fresh.join();
      }
    }
  }
}

}  // namespace
}  // namespace plrank
