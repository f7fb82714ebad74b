// Explain (path-dependent TreeSHAP) on imported XGBoost models gives
// XGBoost's own contributions: the import keeps each leaf's training cover
// (sum_hessian), the weights XGBoost's TreeSHAP uses.

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/model/ensemble.h"
#include "core/explain/ensemble_explainer.h"
#include "core/model/model_io.h"
#include "core/explain/tree_shap.h"
#include "core/import/xgboost_import.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/xgboost_testdata.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;

constexpr int32_t kFeatures = 7;

struct Explained {
  std::vector<std::vector<double>> contributions;  // per row
  double bias = 0;
};

Explained ExplainRows(const Ensemble& model,
                      const std::vector<std::vector<float>>& rows) {
  Explained result;
  absl::StatusOr<EnsembleExplainer> explainer =
      EnsembleExplainer::Create(model);
  EXPECT_TRUE(explainer.ok()) << explainer.status();
  if (!explainer.ok()) return result;
  result.bias = explainer->bias();
  std::vector<ShapTree::PathElement> scratch;
  for (const std::vector<float>& row : rows) {
    std::vector<double> contributions(kFeatures, 0.0);
    explainer->Explain(absl::MakeConstSpan(row.data(), kFeatures),
                       absl::MakeSpan(contributions), &scratch);
    result.contributions.push_back(std::move(contributions));
  }
  return result;
}

// xgb_rank_small_contribs.txt was written by XGBoost 1.7.4 itself: the C
// API's XGBoosterPredict with option_mask 4 (pred_contribs) on the rows of
// xgb_rank_small_expected.txt (NaN = missing) with xgb_rank_small.json
// loaded; each line holds the 7 features' contributions, then the bias.
TEST(XgboostExplainTest, ContributionsMatchXgboostTreeShap) {
  absl::StatusOr<Ensemble> model = ImportXgboostJsonFile(
      testing::XgboostTestdataPath("xgb_rank_small.json"));
  ASSERT_TRUE(model.ok()) << model.status();
  for (const Tree& tree : model->trees) {
    ASSERT_EQ(tree.leaf_cover.size(), static_cast<size_t>(tree.num_leaves()));
  }
  const std::vector<std::vector<float>> expected_rows = testing::ReadFloatRows(
      testing::XgboostTestdataPath("xgb_rank_small_expected.txt"));
  const std::vector<std::vector<float>> xgboost = testing::ReadFloatRows(
      testing::XgboostTestdataPath("xgb_rank_small_contribs.txt"));
  ASSERT_EQ(expected_rows.size(), xgboost.size());
  ASSERT_GE(xgboost.size(), 50u);
  for (size_t i = 0; i < xgboost.size(); ++i) {
    ASSERT_EQ(expected_rows[i].size(), kFeatures + 1u) << "row " << i;
    ASSERT_EQ(xgboost[i].size(), kFeatures + 1u) << "row " << i;
  }

  const Explained ours = ExplainRows(*model, expected_rows);
  ASSERT_EQ(ours.contributions.size(), xgboost.size());
  size_t nonzero = 0;
  for (size_t i = 0; i < xgboost.size(); ++i) {
    // XGBoost computes in float and weighs by its stored node hessians, we
    // in double by the sums of the leaves' (the same up to float rounding).
    EXPECT_NEAR(ours.bias, xgboost[i][kFeatures], 1e-6) << "row " << i;
    for (int32_t f = 0; f < kFeatures; ++f) {
      EXPECT_NEAR(ours.contributions[i][f], xgboost[i][f], 1e-6)
          << "row " << i << " feature " << f;
      nonzero += std::abs(xgboost[i][f]) > 1e-3;
    }
  }
  EXPECT_GT(nonzero, xgboost.size());

  // Without the covers (the import before them: every split weighed 1/2)
  // the contributions are others (by up to 0.28 here), so the comparison
  // above can fail; with them they agree within 1e-7.
  Ensemble uncovered = *model;
  for (Tree& tree : uncovered.trees) tree.leaf_cover.clear();
  const Explained halves = ExplainRows(uncovered, expected_rows);
  double largest_difference = 0;
  for (size_t i = 0; i < xgboost.size(); ++i) {
    for (int32_t f = 0; f < kFeatures; ++f) {
      largest_difference =
          std::max(largest_difference,
                   std::abs(halves.contributions[i][f] - xgboost[i][f]));
    }
  }
  EXPECT_GT(largest_difference, 0.1);
}

// The covers survive the artifact: a converted model explains as the
// imported one.
TEST(XgboostExplainTest, CoversSurviveTheArtifact) {
  absl::StatusOr<Ensemble> model = ImportXgboostJsonFile(
      testing::XgboostTestdataPath("xgb_rank_small.json"));
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::string> bytes = SerializeModel(*model);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<Ensemble> parsed = ParseModel(*bytes, "converted");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->trees.size(), model->trees.size());
  for (size_t t = 0; t < model->trees.size(); ++t) {
    EXPECT_EQ(parsed->trees[t].leaf_cover, model->trees[t].leaf_cover);
  }
}

// The shared one-split model (feature 0 < 1.0: leaf 0.25, else -0.5) with
// base score 0 and the hessian sums XGBoost writes: root 4, left 1, right 3
// (0 for the deleted nodes 3 and 4).
nlohmann::json OneSplitWithCovers() {
  nlohmann::json model = testing::OneSplitXgboostModel();
  model["learner"]["learner_model_param"]["base_score"] = "0E0";
  model["learner"]["gradient_booster"]["model"]["trees"][0]["sum_hessian"] = {
      4.0, 1.0, 3.0, 0.0, 0.0};
  return model;
}

// Hand-computed: E[f] = (1 * 0.25 + 3 * -0.5) / 4 = -0.3125, and feature 0
// carries all of f(x) - E[f].
TEST(XgboostExplainTest, OneSplitByHand) {
  absl::StatusOr<Ensemble> model =
      ImportXgboostJsonModel(OneSplitWithCovers().dump());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->trees[0].leaf_cover, (std::vector<double>{1.0, 3.0}));
  absl::StatusOr<EnsembleExplainer> explainer =
      EnsembleExplainer::Create(*model);
  ASSERT_TRUE(explainer.ok()) << explainer.status();
  EXPECT_DOUBLE_EQ(explainer->bias(), -0.3125);
  std::vector<ShapTree::PathElement> scratch;
  std::vector<double> contributions(2);
  const std::vector<float> left = {0.5f, 0.0f};
  explainer->Explain(left, absl::MakeSpan(contributions), &scratch);
  EXPECT_DOUBLE_EQ(contributions[0], 0.25 + 0.3125);
  EXPECT_DOUBLE_EQ(contributions[1], 0.0);
  const std::vector<float> right = {2.0f, 0.0f};
  explainer->Explain(right, absl::MakeSpan(contributions), &scratch);
  EXPECT_DOUBLE_EQ(contributions[0], -0.5 + 0.3125);
}

TEST(XgboostExplainTest, RejectsBadCovers) {
  for (const nlohmann::json& cover :
       {nlohmann::json{4.0, -1.0, 3.0, 0.0, 0.0},
        nlohmann::json{4.0, 1.0, 1e31, 0.0, 0.0}}) {
    nlohmann::json model = OneSplitWithCovers();
    model["learner"]["gradient_booster"]["model"]["trees"][0]["sum_hessian"] =
        cover;
    absl::StatusOr<Ensemble> result = ImportXgboostJsonModel(model.dump());
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(result.status().message(), HasSubstr("(sum_hessian)"));
  }
  nlohmann::json model = OneSplitWithCovers();
  model["learner"]["gradient_booster"]["model"]["trees"][0]["sum_hessian"] = {
      4.0, 1.0};
  absl::StatusOr<Ensemble> result = ImportXgboostJsonModel(model.dump());
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(),
              HasSubstr("sum_hessian has 2 entries for 5 nodes"));

  // An artifact is validated on its own: covers per leaf, finite, >= 0.
  absl::StatusOr<Ensemble> good =
      ImportXgboostJsonModel(OneSplitWithCovers().dump());
  ASSERT_TRUE(good.ok());
  for (const std::vector<double>& covers :
       {std::vector<double>{1.0}, std::vector<double>{1.0, NAN},
        std::vector<double>{-1.0, 3.0}, std::vector<double>{1.0, INFINITY}}) {
    Ensemble bad = *good;
    bad.trees[0].leaf_cover = covers;
    const absl::Status status = ValidateEnsemble(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("cover")) << status;
  }
}

}  // namespace
}  // namespace plrank
