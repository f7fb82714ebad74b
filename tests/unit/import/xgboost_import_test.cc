#include "core/import/xgboost_import.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/data/file_io.h"
#include "core/model/ensemble.h"
#include "core/scoring/forest_scorer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/xgboost_testdata.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;

// Fixtures made by XGBoost 1.7.4 itself (C API, tree_method=hist,
// grow_policy=lossguide, max_leaves=8, NaNs in features 4-6 so both default
// directions occur). Each *_expected.txt line holds one row's 7 features and
// the margin XGBoost's predictor gave it (type 1 = output margin). Half the
// rows sit exactly on a split condition or one float below it, where
// XGBoost's `x < c` and a naive `x <= c` disagree.
struct ExpectedRows {
  std::vector<float> rows;
  std::vector<double> margins;
};

ExpectedRows ReadExpected(const std::string& path, int32_t features) {
  ExpectedRows expected;
  for (const std::vector<float>& values : testing::ReadFloatRows(path)) {
    if (values.size() != static_cast<size_t>(features) + 1) {
      ADD_FAILURE() << "bad line of " << path << ": " << values.size()
                    << " numbers";
      continue;
    }
    expected.rows.insert(expected.rows.end(), values.begin(), values.end() - 1);
    expected.margins.push_back(values.back());
  }
  return expected;
}

// `extension`: ".json", or ".ubj" (UBJSON: the same models as XGBoost
// 1.7.4 writes them with XGBoosterSaveModelToBuffer({"format": "ubj"}),
// which save_model("m.ubj") calls).
void ExpectScoresMatchXgboost(const std::string& name, double base_margin,
                              const std::string& extension = ".json") {
  absl::StatusOr<Ensemble> model =
      ImportXgboostJsonFile(testing::XgboostTestdataPath(name + extension));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->num_features, 7);
  ASSERT_EQ(model->base_score.size(), 1u);
  EXPECT_NEAR(model->base_score[0], base_margin, 1e-6);
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(*model);
  ASSERT_TRUE(scorer.ok()) << scorer.status();

  const ExpectedRows expected =
      ReadExpected(testing::XgboostTestdataPath(name + "_expected.txt"), 7);
  const size_t docs = expected.margins.size();
  ASSERT_GE(docs, 50u);
  size_t with_nan = 0;
  for (float value : expected.rows) with_nan += std::isnan(value);
  EXPECT_GT(with_nan, 10u);
  std::vector<double> scores(docs);
  scorer->Score(expected.rows, docs, absl::MakeSpan(scores));
  for (size_t i = 0; i < docs; ++i) {
    // XGBoost sums in float; we sum the same float leaves in double.
    EXPECT_NEAR(scores[i], expected.margins[i],
                1e-5 * std::max(1.0, std::abs(expected.margins[i])))
        << name << " row " << i;
  }
}

TEST(XgboostImportTest, RankPairwiseMarginsMatchXgboost) {
  ExpectScoresMatchXgboost("xgb_rank_small", 0.5);
  absl::StatusOr<Ensemble> model = ImportXgboostJsonFile(
      testing::XgboostTestdataPath("xgb_rank_small.json"));
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->objective, "xgboost:rank:pairwise");
  EXPECT_EQ(model->parameters.at("source"), "xgboost 1.7.4");
  EXPECT_EQ(model->trees.size(), 6u);
  for (const Tree& tree : model->trees) {
    EXPECT_EQ(tree.num_leaves(), 8);
    EXPECT_EQ(tree.split_gain.size(), 7u);
  }
}

// UBJSON files import into the same trees, bit for bit, as the JSON files
// of the same models, and score as XGBoost did.
TEST(XgboostImportTest, UbjsonModelsImportAsTheirJson) {
  for (const char* name : {"xgb_rank_small", "xgb_logistic_small"}) {
    absl::StatusOr<Ensemble> json = ImportXgboostJsonFile(
        testing::XgboostTestdataPath(std::string(name) + ".json"));
    absl::StatusOr<Ensemble> ubjson = ImportXgboostJsonFile(
        testing::XgboostTestdataPath(std::string(name) + ".ubj"));
    ASSERT_TRUE(json.ok()) << json.status();
    ASSERT_TRUE(ubjson.ok()) << ubjson.status();
    EXPECT_EQ(ubjson->objective, json->objective);
    EXPECT_EQ(ubjson->base_score, json->base_score);
    EXPECT_EQ(ubjson->parameters, json->parameters);
    ASSERT_EQ(ubjson->trees.size(), json->trees.size());
    for (size_t t = 0; t < json->trees.size(); ++t) {
      const Tree& a = ubjson->trees[t];
      const Tree& b = json->trees[t];
      EXPECT_EQ(a.split_feature, b.split_feature) << name << " tree " << t;
      EXPECT_EQ(a.threshold, b.threshold) << name << " tree " << t;
      EXPECT_EQ(a.default_left, b.default_left) << name << " tree " << t;
      EXPECT_EQ(a.left_child, b.left_child) << name << " tree " << t;
      EXPECT_EQ(a.right_child, b.right_child) << name << " tree " << t;
      EXPECT_EQ(a.leaf_value, b.leaf_value) << name << " tree " << t;
      EXPECT_EQ(a.split_gain, b.split_gain) << name << " tree " << t;
    }
  }
  ExpectScoresMatchXgboost("xgb_rank_small", 0.5, ".ubj");
}

// A few bytes of UBJSON can claim 2^62 elements that cost no byte each
// (typed arrays of nulls or booleans); the reader stops at once instead of
// building them, and a count beyond any container's size throws nothing.
TEST(XgboostImportTest, RejectsUbjsonClaimingMoreValuesThanItsBytes) {
  const std::string huge_count("L\x40\x00\x00\x00\x00\x00\x00\x00", 9);
  const std::string max_count("L\x7f\xff\xff\xff\xff\xff\xff\xff", 9);
  for (const std::string& bad : {"{i\x07learner[$Z#" + huge_count + "}",
                                 "{i\x07learner[$T#" + huge_count + "}",
                                 "{i\x07learner[$F#" + max_count + "}",
                                 "{i\x07learner{#" + max_count + "}",
                                 "{i\x07learner[#" + max_count + "]}"}) {
    absl::StatusOr<Ensemble> result = ImportXgboostJsonModel(bad);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(result.status().message(),
                HasSubstr("claims more values than its bytes hold"));
  }
  // Nesting: the UBJSON reader recurses per level (a fuzzer's 5 KB of '['
  // overflowed the stack); JSON is held to the same limit.
  for (const std::string& deep :
       {"{i\x07learner" + std::string(100000, '['),
        "{\"learner\": " + std::string(100000, '[')}) {
    absl::StatusOr<Ensemble> result = ImportXgboostJsonModel(deep);
    ASSERT_FALSE(result.ok());
    EXPECT_THAT(result.status().message(),
                HasSubstr("containers nest deeper than 64 levels"));
  }
  absl::StatusOr<std::string> ubjson =
      ReadWholeFile(testing::XgboostTestdataPath("xgb_rank_small.ubj"));
  ASSERT_TRUE(ubjson.ok()) << ubjson.status();
  ASSERT_GT(ubjson->size(), 1000u);
  absl::StatusOr<Ensemble> cut = ImportXgboostJsonModel(ubjson->substr(0, 700));
  ASSERT_FALSE(cut.ok());
  EXPECT_THAT(cut.status().message(), HasSubstr("not valid UBJSON"));
}

TEST(XgboostImportTest, LogisticBaseScoreBecomesLogitMargin) {
  // base_score 0.3 was set at training time; the margin adds logit(0.3).
  ExpectScoresMatchXgboost("xgb_logistic_small",
                           -std::log(1.0f / 0.3f - 1.0f));
}

TEST(XgboostImportTest, StrictLessThanBecomesLessOrEqualOnPreviousFloat) {
  absl::StatusOr<Ensemble> model =
      ImportXgboostJsonModel(testing::OneSplitXgboostModel().dump());
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->trees.size(), 1u);
  const Tree& tree = model->trees[0];
  EXPECT_EQ(tree.num_internal_nodes(), 1);  // deleted nodes dropped
  EXPECT_EQ(tree.num_leaves(), 2);
  EXPECT_EQ(tree.threshold[0], std::nextafter(1.0f, 0.0f));
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(*model);
  ASSERT_TRUE(scorer.ok());
  const float below = std::nextafter(1.0f, 0.0f);
  const std::vector<float> rows = {1.0f, 0, below, 0, NAN, 0,
                                   -INFINITY, 0, INFINITY, 0};
  std::vector<double> out(5);
  scorer->Score(rows, 5, absl::MakeSpan(out));
  EXPECT_EQ(out, (std::vector<double>{0.5, 1.25, 1.25, 1.25, 0.5}));
}

void ExpectError(const nlohmann::json& model, absl::StatusCode code,
                 const std::string& fragment) {
  absl::StatusOr<Ensemble> result = ImportXgboostJsonModel(model.dump());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), code) << result.status();
  EXPECT_NE(result.status().message().find(fragment), std::string::npos)
      << result.status();
}

TEST(XgboostImportTest, RejectsCorruptJson) {
  const std::string text = testing::OneSplitXgboostModel().dump();
  for (const std::string& bad :
       {std::string(), text.substr(0, text.size() / 2), std::string("{]"),
        std::string("\x7b\x4c\x00\x00", 4), std::string("[1, 2]"),
        std::string("null")}) {
    absl::StatusOr<Ensemble> result = ImportXgboostJsonModel(bad);
    EXPECT_FALSE(result.ok()) << bad;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(XgboostImportTest, RejectsWrongTypes) {
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  nlohmann::json model = testing::OneSplitXgboostModel();
  auto& tree = model["learner"]["gradient_booster"]["model"]["trees"][0];
  tree["split_indices"] = "0";
  ExpectError(model, kInvalid, "split_indices is not an array");

  model = testing::OneSplitXgboostModel();
  model["learner"]["gradient_booster"]["model"]["trees"][0]
       ["split_conditions"][0] = "1.0";
  ExpectError(model, kInvalid, "wrong type");

  model = testing::OneSplitXgboostModel();
  model["learner"]["gradient_booster"]["model"]["trees"][0]["left_children"] =
      {1, -1, -1};
  ExpectError(model, kInvalid, "3 entries for 5 nodes");

  model = testing::OneSplitXgboostModel();
  model["learner"]["learner_model_param"]["num_feature"] = "many";
  ExpectError(model, kInvalid, "num_feature");

  model = testing::OneSplitXgboostModel();
  model["learner"]["learner_model_param"]["base_score"] = true;
  ExpectError(model, kInvalid, "base_score");

  model = testing::OneSplitXgboostModel();
  model["learner"]["gradient_booster"]["model"]["trees"] = 7;
  ExpectError(model, kInvalid, "trees is not an array");

  model = testing::OneSplitXgboostModel();
  model["learner"].erase("objective");
  ExpectError(model, kInvalid, "objective");
}

TEST(XgboostImportTest, RejectsBrokenTrees) {
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  nlohmann::json model = testing::OneSplitXgboostModel();
  auto* tree = &model["learner"]["gradient_booster"]["model"]["trees"][0];
  (*tree)["split_indices"][0] = 2;  // num_feature is 2
  ExpectError(model, kInvalid, "outside [0, 2)");

  model = testing::OneSplitXgboostModel();
  tree = &model["learner"]["gradient_booster"]["model"]["trees"][0];
  (*tree)["left_children"][0] = 7;
  ExpectError(model, kInvalid, "node 7 outside");

  model = testing::OneSplitXgboostModel();
  tree = &model["learner"]["gradient_booster"]["model"]["trees"][0];
  (*tree)["left_children"][0] = 0;  // cycle
  ExpectError(model, kInvalid, "twice");

  model = testing::OneSplitXgboostModel();
  tree = &model["learner"]["gradient_booster"]["model"]["trees"][0];
  (*tree)["right_children"][1] = 2;  // one child only
  ExpectError(model, kInvalid, "exactly one child");

  model = testing::OneSplitXgboostModel();
  tree = &model["learner"]["gradient_booster"]["model"]["trees"][0];
  (*tree)["split_conditions"][0] = -std::numeric_limits<float>::max();
  ExpectError(model, kInvalid, "no finite equivalent");
}

TEST(XgboostImportTest, RejectsUnsupportedModels) {
  const auto kUnimplemented = absl::StatusCode::kUnimplemented;
  nlohmann::json model = testing::OneSplitXgboostModel();
  model["learner"]["objective"]["name"] = "multi:softprob";
  ExpectError(model, kUnimplemented, "objective \"multi:softprob\"");

  model = testing::OneSplitXgboostModel();
  model["learner"]["objective"]["name"] = "binary:logistic";
  ExpectError(model, kUnimplemented, "not supported");

  model = testing::OneSplitXgboostModel();
  model["learner"]["gradient_booster"]["name"] = "dart";
  ExpectError(model, kUnimplemented, "booster \"dart\"");

  model = testing::OneSplitXgboostModel();
  model["learner"]["learner_model_param"]["num_class"] = "3";
  ExpectError(model, kUnimplemented, "single-output");

  model = testing::OneSplitXgboostModel();
  model["learner"]["learner_model_param"]["num_target"] = "2";
  ExpectError(model, kUnimplemented, "single-output");

  model = testing::OneSplitXgboostModel();
  model["learner"]["gradient_booster"]["model"]["trees"][0]["split_type"][0] =
      1;
  ExpectError(model, kUnimplemented, "categorical");
}

TEST(XgboostImportTest, MissingFileIsNotFound) {
  absl::StatusOr<Ensemble> model =
      ImportXgboostJsonFile(testing::XgboostTestdataPath("no_such_model.json"));
  EXPECT_EQ(model.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace plrank
