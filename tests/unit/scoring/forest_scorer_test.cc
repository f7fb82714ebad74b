#include "core/scoring/forest_scorer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/data/dataset.h"
#include "core/cpu/cpu_features.h"
#include "core/model/ensemble.h"
#include "core/model/model_io.h"
#include "gtest/gtest.h"
#include "tests/testing/random_model.h"

namespace plrank {
namespace {

// Bitwise comparison: the scorer promises the reference summation order.
void ExpectBitwiseEqual(double expected, double actual, size_t doc) {
  EXPECT_EQ(std::memcmp(&expected, &actual, sizeof(double)), 0)
      << "doc " << doc << ": expected " << expected << " got " << actual;
}

// RawScores with `requested` trees against the reference, bit for bit; the
// scorer rounds a tree count up to whole iterations.
void ExpectRawScoresMatchReference(const ForestScorer& scorer,
                                   const Ensemble& model,
                                   const std::vector<float>& rows, size_t docs,
                                   int32_t requested) {
  const int32_t outputs = model.num_outputs;
  const int32_t features = model.num_features;
  std::vector<double> raw(docs * outputs);
  scorer.RawScores(rows, docs, absl::MakeSpan(raw), requested);
  size_t used = model.trees.size();
  if (requested > 0) {
    used =
        std::min<size_t>(used, (requested + outputs - 1) / outputs * outputs);
  }
  for (size_t i = 0; i < docs; ++i) {
    for (int32_t k = 0; k < outputs; ++k) {
      ExpectBitwiseEqual(
          testing::ReferenceRaw(model, &rows[i * features], k, used),
          raw[k * docs + i], i);
    }
  }
}

// Score (single output, identity transform) against the reference over all
// trees, bit for bit.
void ExpectScoresMatchReference(const ForestScorer& scorer,
                                const Ensemble& model,
                                const std::vector<float>& rows, size_t docs) {
  std::vector<double> scores(docs);
  scorer.Score(rows, docs, absl::MakeSpan(scores));
  for (size_t i = 0; i < docs; ++i) {
    ExpectBitwiseEqual(
        testing::ReferenceRaw(model, &rows[i * model.num_features], 0,
                              model.trees.size()),
        scores[i], i);
  }
}

TEST(ForestScorerTest, MatchesReferenceOnRandomForestsWithNaNs) {
  std::mt19937_64 rng(123);
  for (int trial = 0; trial < 6; ++trial) {
    const int32_t features = 3 + trial * 7;
    // Enough trees to span several tree blocks.
    Ensemble model =
        testing::RandomEnsemble(rng, 60 + trial * 40, 40, features);
    if (trial % 2 == 1) model.base_score.clear();
    absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
    ASSERT_TRUE(scorer.ok()) << scorer.status();
    // Not a multiple of the document block size.
    const size_t docs = 64 * 3 + 17 + trial;
    std::vector<float> rows = testing::RandomRows(rng, docs, features, 0.2);
    ExpectScoresMatchReference(*scorer, model, rows, docs);
  }
}

// Deep chains (unbalanced, as leaf-wise growth produces) next to stumps:
// documents leave a tree's walk at very different depths.
TEST(ForestScorerTest, MatchesReferenceOnChainsAndStumps) {
  std::mt19937_64 rng(77);
  const int32_t features = 4;
  Ensemble model;
  model.num_features = features;
  for (int32_t t = 0; t < 12; ++t) {
    if (t % 4 == 3) {
      model.trees.push_back(testing::RandomTree(rng, 1, features));
      continue;
    }
    const int32_t length = 5 + 15 * t;
    Tree chain;
    for (int32_t n = 0; n < length; ++n) {
      chain.split_feature.push_back(n % features);
      chain.threshold.push_back(testing::GridValue(rng));
      chain.default_left.push_back((n + t) % 3 == 0);
      const bool leaf_on_left = (n + t) % 2 == 0;
      const int32_t next = n + 1 < length ? n + 1 : ~(n + 1);
      chain.left_child.push_back(leaf_on_left ? ~n : next);
      chain.right_child.push_back(leaf_on_left ? next : ~n);
    }
    for (int32_t l = 0; l <= length; ++l)
      chain.leaf_value.push_back(0.01 * l + t);
    model.trees.push_back(chain);
  }
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  const size_t docs = 137;
  std::vector<float> rows = testing::RandomRows(rng, docs, features, 0.15);
  ExpectScoresMatchReference(*scorer, model, rows, docs);
}

TEST(ForestScorerTest, NumTreesTruncatesToWholeIterations) {
  std::mt19937_64 rng(5);
  const int32_t features = 6;
  for (int32_t outputs : {1, 3}) {
    Ensemble model = testing::RandomEnsemble(rng, 10, 12, features, outputs);
    absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
    ASSERT_TRUE(scorer.ok());
    const size_t docs = 70;
    std::vector<float> rows = testing::RandomRows(rng, docs, features);
    for (int32_t requested : {1, 2, 3, 4, 7, 29, 30, 31, 1000, 0, -1}) {
      ExpectRawScoresMatchReference(*scorer, model, rows, docs, requested);
    }
  }
}

TEST(ForestScorerTest, ExpectedRelevanceTransform) {
  std::mt19937_64 rng(9);
  const int32_t features = 8;
  const int32_t outputs = 5;
  Ensemble model = testing::RandomEnsemble(rng, 15, 10, features, outputs);
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
  ASSERT_TRUE(scorer.ok());
  EXPECT_EQ(scorer->num_outputs(), outputs);
  const size_t docs = 300;
  std::vector<float> rows = testing::RandomRows(rng, docs, features);
  std::vector<double> scores(docs);
  scorer->Score(rows, docs, absl::MakeSpan(scores));
  for (size_t i = 0; i < docs; ++i) {
    std::vector<double> raw(outputs);
    double max_raw = -INFINITY;
    for (int32_t k = 0; k < outputs; ++k) {
      raw[k] = testing::ReferenceRaw(model, &rows[i * features], k,
                                     model.trees.size());
      max_raw = std::max(max_raw, raw[k]);
    }
    double z = 0, expected = 0;
    for (int32_t k = 0; k < outputs; ++k) {
      z += std::exp(raw[k] - max_raw);
      expected += k * std::exp(raw[k] - max_raw);
    }
    expected /= z;
    EXPECT_NEAR(scores[i], expected, 1e-12) << i;
    EXPECT_GE(scores[i], 0.0);
    EXPECT_LE(scores[i], outputs - 1.0);
  }
}

TEST(ForestScorerTest, LinearWeightsTreatNaNAsZero) {
  std::mt19937_64 rng(17);
  const int32_t features = 9;
  Ensemble model = testing::RandomEnsemble(rng, 5, 6, features);
  for (int32_t f = 0; f < features; ++f)
    model.linear_weights.push_back(0.1 * f - 0.3);
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
  ASSERT_TRUE(scorer.ok());
  const size_t docs = 100;
  std::vector<float> rows = testing::RandomRows(rng, docs, features, 0.3);
  ExpectScoresMatchReference(*scorer, model, rows, docs);

  // A purely linear model: the score is the dot product (NaN -> 0).
  Ensemble linear;
  linear.num_features = 2;
  linear.linear_weights = {2.0, -1.0};
  linear.base_score = {0.5};
  absl::StatusOr<ForestScorer> linear_scorer = ForestScorer::Create(linear);
  ASSERT_TRUE(linear_scorer.ok());
  const std::vector<float> two_rows = {1.0f, 3.0f, NAN, 4.0f};
  std::vector<double> out(2);
  linear_scorer->Score(two_rows, 2, absl::MakeSpan(out));
  EXPECT_EQ(out[0], 0.5 + (2.0 - 3.0));
  EXPECT_EQ(out[1], 0.5 - 4.0);
}

TEST(ForestScorerTest, HandlesBoundaryAndDefaultDirections) {
  // One split f0 <= 1.0; NaN goes right here, left in the copy.
  Tree tree;
  tree.split_feature = {0};
  tree.threshold = {1.0f};
  tree.default_left = {0};
  tree.left_child = {~0};
  tree.right_child = {~1};
  tree.leaf_value = {10.0, 20.0};
  Ensemble model;
  model.num_features = 1;
  model.trees = {tree};
  Tree left_default = tree;
  left_default.default_left = {1};
  model.trees.push_back(left_default);
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
  ASSERT_TRUE(scorer.ok());
  const std::vector<float> rows = {1.0f, std::nextafter(1.0f, 2.0f), NAN,
                                   -INFINITY, INFINITY};
  std::vector<double> out(rows.size());
  scorer->Score(rows, rows.size(), absl::MakeSpan(out));
  EXPECT_EQ(out[0], 20.0);  // equal to the threshold goes left in both
  EXPECT_EQ(out[1], 40.0);
  EXPECT_EQ(out[2], 30.0);  // NaN: right in tree 0, left in tree 1
  EXPECT_EQ(out[3], 20.0);
  EXPECT_EQ(out[4], 40.0);
}

TEST(ForestScorerTest, DatasetScoringMatchesRows) {
  std::mt19937_64 rng(31);
  const int32_t features = 10;
  for (int32_t outputs : {1, 4}) {
    Ensemble model = testing::RandomEnsemble(rng, 20, 16, features, outputs);
    absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
    ASSERT_TRUE(scorer.ok());
    const size_t docs = 150;
    // Data with fewer columns (missing read as 0) and with extra columns.
    for (int32_t data_features : {features - 3, features, features + 2}) {
      Dataset data;
      data.num_features = data_features;
      data.labels.assign(docs, 0);
      data.query_offsets = {0, static_cast<uint32_t>(docs)};
      std::vector<float> rows_data =
          testing::RandomRows(rng, docs, data_features);
      data.features.resize(docs * data_features);
      std::vector<float> rows(docs * features, 0.0f);
      for (size_t i = 0; i < docs; ++i) {
        for (int32_t f = 0; f < data_features; ++f) {
          data.features[f * docs + i] = rows_data[i * data_features + f];
          if (f < features)
            rows[i * features + f] = rows_data[i * data_features + f];
        }
      }
      std::vector<double> expected(docs);
      scorer->Score(rows, docs, absl::MakeSpan(expected));
      EXPECT_EQ(scorer->ScoreDataset(data), expected);
      std::vector<double> raw(docs * outputs);
      scorer->RawScores(rows, docs, absl::MakeSpan(raw), outputs * 3);
      EXPECT_EQ(scorer->RawScoresDataset(data, outputs * 3), raw);
    }
  }
}

// Rows only as wide as the features the model reads give the same scores as
// full rows, and a model declaring the largest allowed width scores from
// narrow rows and a Dataset without any memory for the columns it never
// tests.
TEST(ForestScorerTest, NarrowRowsAndWideDeclaredModels) {
  std::mt19937_64 rng(41);
  const int32_t features = 12;
  for (int32_t outputs : {1, 3}) {
    Ensemble model = testing::RandomEnsemble(rng, 15, 16, features, outputs);
    model.transform = outputs > 1 ? ScoreTransform::kExpectedRelevance
                                  : ScoreTransform::kIdentity;
    int32_t widest = -1;
    for (const Tree& tree : model.trees) {
      for (int32_t f : tree.split_feature) widest = std::max(widest, f);
    }
    absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
    ASSERT_TRUE(scorer.ok());
    EXPECT_EQ(scorer->row_width(), widest + 1);
    const size_t docs = 140;
    std::vector<float> rows = testing::RandomRows(rng, docs, features, 0.2);
    std::vector<double> expected(docs);
    scorer->Score(rows, docs, absl::MakeSpan(expected));
    const size_t width = static_cast<size_t>(scorer->row_width());
    std::vector<float> narrow(docs * width);
    for (size_t i = 0; i < docs; ++i) {
      std::copy_n(&rows[i * features], width, &narrow[i * width]);
    }
    std::vector<double> scores(docs);
    scorer->Score(narrow, docs, absl::MakeSpan(scores), width);
    EXPECT_EQ(scores, expected);

    // The same trees in a model declaring the maximum width.
    Ensemble wide = model;
    wide.num_features = kMaxModelFeatures;
    wide.feature_names.clear();
    absl::StatusOr<ForestScorer> wide_scorer = ForestScorer::Create(wide);
    ASSERT_TRUE(wide_scorer.ok()) << wide_scorer.status();
    EXPECT_EQ(wide_scorer->row_width(), widest + 1);
    wide_scorer->Score(narrow, docs, absl::MakeSpan(scores), width);
    EXPECT_EQ(scores, expected);
    Dataset data;
    data.num_features = features;
    data.labels.assign(docs, 0);
    data.query_offsets = {0, static_cast<uint32_t>(docs)};
    data.features.resize(docs * features);
    for (size_t i = 0; i < docs; ++i) {
      for (int32_t f = 0; f < features; ++f) {
        data.features[f * docs + i] = rows[i * features + f];
      }
    }
    EXPECT_EQ(wide_scorer->ScoreDataset(data), expected);
  }
  // With linear weights every declared feature is read.
  Ensemble linear;
  linear.num_features = 3;
  linear.linear_weights = {1.0, 2.0, 3.0};
  absl::StatusOr<ForestScorer> linear_scorer = ForestScorer::Create(linear);
  ASSERT_TRUE(linear_scorer.ok());
  EXPECT_EQ(linear_scorer->row_width(), 3);
}

TEST(ForestScorerTest, StumpsAndEmptyInput) {
  Ensemble model;
  model.num_features = 0;
  model.trees.resize(2);
  model.trees[0].leaf_value = {1.5};
  model.trees[1].leaf_value = {-0.25};
  model.base_score = {1.0};
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
  ASSERT_TRUE(scorer.ok());
  std::vector<double> out(3);
  scorer->Score({}, 3, absl::MakeSpan(out));
  EXPECT_EQ(out, std::vector<double>(3, 2.25));
  scorer->Score({}, 0, absl::MakeSpan(out).subspan(0, 0));
}

TEST(ForestScorerTest, RejectsInvalidModel) {
  Ensemble model;
  model.num_features = 1;
  model.trees.resize(1);
  model.trees[0].leaf_value = {NAN};
  EXPECT_FALSE(ForestScorer::Create(model).ok());
}

// QuickScorer path: trees of up to 32 leaves (32 = every mask bit), several
// QuickScorer blocks (more than 8192 split nodes), single and multiple
// outputs, batches that are and are not multiples of 8 (the remainder walks
// the trees), NaN in both default directions, and num_trees prefixes that
// end inside a block. Bit-identical to the reference in every case.
TEST(ForestScorerTest, QuickScorerMatchesReference) {
  std::mt19937_64 rng(2024);
  const bool avx2 = CpuFeatures::Detected().avx2;
  for (int32_t outputs : {1, 3}) {
    const int32_t features = 11;
    const int32_t iterations = outputs == 1 ? 700 : 120;
    Ensemble model =
        testing::RandomEnsemble(rng, iterations, 32, features, outputs);
    // Make sure full 32-leaf trees are present.
    model.trees[0] = testing::RandomTree(rng, 32, features);
    model.trees.back() = testing::RandomTree(rng, 32, features);
    absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
    ASSERT_TRUE(scorer.ok()) << scorer.status();
    EXPECT_EQ(scorer->uses_quick_scorer(), avx2);
    for (size_t docs : {size_t{8}, size_t{29}, size_t{64}, size_t{203}}) {
      std::vector<float> rows = testing::RandomRows(rng, docs, features, 0.3);
      for (int32_t requested : {0, 5 * outputs, 301 * outputs}) {
        ExpectRawScoresMatchReference(*scorer, model, rows, docs, requested);
      }
    }
  }
}

TEST(ForestScorerTest, QuickScorerOnlyForTreesUpTo32Leaves) {
  std::mt19937_64 rng(3);
  Ensemble model = testing::RandomEnsemble(rng, 5, 8, 4);
  model.trees[2] = testing::RandomTree(rng, 33, 4);
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
  ASSERT_TRUE(scorer.ok());
  EXPECT_FALSE(scorer->uses_quick_scorer());
}

// Chained walks (trees over 32 leaves, single output, at least 5 documents
// in a document block): each document walks a whole tree block, leaf to next
// root. Several blocks, deep trees, NaNs, batches of 5 to 7 (one group padded
// with copies of the last document), remainders of 1 (the lane chains), of 2
// (lockstep walks) and of 3 to 7 documents (a padded group), and num_trees
// prefixes that end inside a block (which fall back to lockstep walks).
TEST(ForestScorerTest, ChainedWalksMatchReference) {
  std::mt19937_64 rng(808);
  const int32_t features = 9;
  Ensemble model = testing::RandomEnsemble(rng, 90, 255, features);
  model.trees[3] = testing::RandomTree(rng, 255, features);
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  EXPECT_FALSE(scorer->uses_quick_scorer());
  for (size_t docs :
       {size_t{4}, size_t{5}, size_t{7}, size_t{8}, size_t{9}, size_t{10},
        size_t{11}, size_t{32}, size_t{33}, size_t{34}, size_t{39}, size_t{45},
        size_t{100}, size_t{300}, ForestScorer::kBlockDocs + 45}) {
    std::vector<float> rows = testing::RandomRows(rng, docs, features, 0.25);
    for (int32_t requested : {0, 1, 17, 89}) {
      ExpectRawScoresMatchReference(*scorer, model, rows, docs, requested);
    }
  }
}

// Nodes are laid out by how many training documents (XGBoost: how much
// hessian) reach them, from leaf covers, else leaf counts, else leaf numbers:
// every layout scores as the reference, bit for bit, on every path.
TEST(ForestScorerTest, LayoutByLeafWeightsKeepsScores) {
  std::mt19937_64 rng(919);
  const int32_t features = 6;
  const Ensemble counted = testing::RandomEnsemble(rng, 40, 255, features);
  Ensemble covered = counted;
  Ensemble unweighted = counted;
  for (size_t t = 0; t < counted.trees.size(); ++t) {
    Tree& tree = covered.trees[t];
    tree.leaf_cover.resize(tree.leaf_value.size());
    // Covers that disagree with the counts, so the layout differs.
    for (size_t l = 0; l < tree.leaf_cover.size(); ++l) {
      tree.leaf_cover[l] =
          1.0 / (1.0 + static_cast<double>(tree.leaf_count[l]));
    }
    unweighted.trees[t].leaf_count.clear();
  }
  for (const Ensemble* model :
       std::vector<const Ensemble*>{&counted, &covered, &unweighted}) {
    absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(*model);
    ASSERT_TRUE(scorer.ok()) << scorer.status();
    for (size_t docs :
         {size_t{1}, size_t{2}, size_t{6}, size_t{10}, size_t{100}}) {
      std::vector<float> rows = testing::RandomRows(rng, docs, features, 0.2);
      ExpectRawScoresMatchReference(*scorer, *model, rows, docs, 0);
    }
  }
}

// Splits that treat zero as missing (LightGBM's missing type "Zero"), mixed
// with plain splits on the same features, on every scoring path: QuickScorer
// (trees up to 32 leaves), chained walks (larger trees, >= 32 documents) and
// lockstep walks (small batches, remainders, tree-count prefixes); rows full
// of values at and next to the zero bound. Bit-identical to the reference.
TEST(ForestScorerTest, ZeroAsMissingMatchesReferenceOnEveryPath) {
  std::mt19937_64 rng(1235);
  const int32_t features = 7;
  for (const int32_t max_leaves : {32, 255}) {
    Ensemble model = testing::RandomEnsemble(rng, 80, max_leaves, features);
    testing::AddZeroAsMissing(rng, 0.5, &model);
    absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
    ASSERT_TRUE(scorer.ok()) << scorer.status();
    if (max_leaves > 32) {
      EXPECT_FALSE(scorer->uses_quick_scorer());
    }
    for (size_t docs : {size_t{1}, size_t{8}, size_t{29}, size_t{64},
                        size_t{203}}) {
      std::vector<float> rows =
          testing::RowsNearZero(rng, docs, features, 0.2);
      for (int32_t requested : {0, 1, 17, 79}) {
        ExpectRawScoresMatchReference(*scorer, model, rows, docs, requested);
      }
    }
  }
}

// The flag changes where zero goes: a split "x <= 0.5, missing right" sends
// 0 left unless zero counts as missing, and then only values with
// |x| <= 1e-35f go right with NaN.
TEST(ForestScorerTest, ZeroAsMissingSendsOnlyTinyValuesToTheDefaultSide) {
  Ensemble model;
  model.num_features = 1;
  Tree tree;
  tree.split_feature = {0};
  tree.threshold = {0.5f};
  tree.default_left = {0};
  tree.zero_as_missing = {1};
  tree.left_child = {~0};
  tree.right_child = {~1};
  tree.leaf_value = {1.0, 2.0};
  model.trees = {tree};
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  const float bound = kZeroAsMissingBound;
  const std::vector<float> rows = {
      0.0f,  -0.0f, bound, -bound, std::nextafter(bound, 1.0f),
      -std::nextafter(bound, 1.0f), NAN, 0.25f, 0.75f, -3.0f};
  std::vector<double> out(rows.size());
  scorer->Score(rows, rows.size(), absl::MakeSpan(out));
  EXPECT_EQ(out, (std::vector<double>{2, 2, 2, 2, 1, 1, 2, 1, 2, 1}));
}

}  // namespace
}  // namespace plrank
