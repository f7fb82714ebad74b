// DocumentScorer with sparse documents (issue 39 item 9): the row buffer is
// kept all zeros between chunks, so a sparse document costs its non-zeros,
// not the model's row width. Checked here: what one document writes never
// leaks into the next document, chunk or request, with dense and sparse
// documents mixed, and a model reading feature 2^24 - 1 scores sparse
// documents exactly.

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "core/model/ensemble.h"
#include "core/scoring/forest_scorer.h"
#include "server/document_scoring.h"

namespace plrank::server {
namespace {

// score = (x[a] > 0.5 ? 2 : 0) + (x[b] > 0.5 ? 1 : 0), missing = 0.
Ensemble TwoSplitModel(int32_t num_features, int32_t a, int32_t b) {
  Ensemble model;
  model.num_features = num_features;
  model.objective = "plrank";
  model.num_outputs = 1;
  model.base_score = {0.0};
  for (const auto& [feature, value] :
       {std::pair<int32_t, double>{a, 2.0}, {b, 1.0}}) {
    Tree tree;
    tree.split_feature = {feature};
    tree.threshold = {0.5f};
    tree.default_left = {1};
    tree.left_child = {-1};
    tree.right_child = {-2};
    tree.split_gain = {1.0};
    tree.leaf_value = {0.0, value};
    tree.leaf_count = {10, 10};
    model.trees.push_back(tree);
  }
  return model;
}

void AddSparse(Documents* documents, std::vector<uint32_t> indices) {
  v1::Document* document = documents->Add();
  auto* sparse = document->mutable_sparse();
  for (uint32_t index : indices) {
    sparse->add_indices(index);
    sparse->add_values(1.0f);
  }
}

std::vector<double> ScoreAll(const ForestScorer& scorer,
                             const Documents& documents) {
  auto scores = DocumentScorer::Score(scorer, documents, "",
                                      [] { return absl::OkStatus(); });
  EXPECT_TRUE(scores.ok()) << scores.status();
  if (!scores.ok()) return {};
  return std::vector<double>(scores->begin(), scores->end());
}

TEST(SparseRowsTest, WrittenFeaturesNeverLeakIntoLaterDocuments) {
  auto scorer = ForestScorer::Create(TwoSplitModel(8, 7, 3));
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  Documents documents;
  AddSparse(&documents, {3, 7});
  AddSparse(&documents, {});
  v1::Document* dense = documents.Add();
  for (int f = 0; f < 8; ++f) dense->mutable_dense()->add_values(1.0f);
  AddSparse(&documents, {1});
  AddSparse(&documents, {7});
  v1::Document* zeros = documents.Add();
  for (int f = 0; f < 8; ++f) zeros->mutable_dense()->add_values(0.0f);
  AddSparse(&documents, {3});
  EXPECT_EQ(ScoreAll(*scorer, documents),
            (std::vector<double>{3, 0, 3, 0, 2, 0, 1}));
  // The next request on this thread starts from clean rows.
  Documents empty;
  AddSparse(&empty, {});
  AddSparse(&empty, {0});
  EXPECT_EQ(ScoreAll(*scorer, empty), (std::vector<double>{0, 0}));
}

TEST(SparseRowsTest, VeryWideModelScoresSparseDocumentsExactly) {
  constexpr int32_t kWidth = int32_t{1} << 24;
  auto scorer = ForestScorer::Create(TwoSplitModel(kWidth, kWidth - 1, 5));
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  ASSERT_EQ(scorer->row_width(), kWidth);
  Documents documents;
  for (int i = 0; i < 300; ++i) {  // several one-document chunks
    switch (i % 3) {
      case 0: AddSparse(&documents, {5, kWidth - 1}); break;
      case 1: AddSparse(&documents, {}); break;
      default: AddSparse(&documents, {kWidth - 1}); break;
    }
  }
  const std::vector<double> scores = ScoreAll(*scorer, documents);
  ASSERT_EQ(scores.size(), 300u);
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(scores[i], i % 3 == 0 ? 3.0 : (i % 3 == 1 ? 0.0 : 2.0)) << i;
  }
}

}  // namespace
}  // namespace plrank::server
