#include <cmath>
#include <random>

#include "core/model/ensemble.h"
#include "core/model/model_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/random_model.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;

// A fixed tree: node 0 splits f0 <= 0.5 into node 1 (left) and leaf 2
// (right); node 1 splits f1 <= 1 into leaf 0 (left) and leaf 1 (right).
Tree SmallTree() {
  Tree tree;
  tree.split_feature = {0, 1};
  tree.threshold = {0.5f, 1.0f};
  tree.default_left = {1, 0};
  tree.left_child = {1, ~0};
  tree.right_child = {~2, ~1};
  tree.leaf_value = {-1.0, 0.5, 2.0};
  return tree;
}

Ensemble SmallModel() {
  Ensemble model;
  model.num_features = 2;
  model.trees = {SmallTree(), SmallTree()};
  return model;
}

void ExpectInvalid(const Ensemble& model, const std::string& fragment) {
  absl::Status status = ValidateEnsemble(model);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << fragment;
  EXPECT_THAT(status.message(), HasSubstr(fragment));
}

TEST(ValidateEnsembleTest, AcceptsValidModels) {
  EXPECT_TRUE(ValidateEnsemble(SmallModel()).ok());
  std::mt19937_64 rng(1);
  for (int outputs : {1, 2, 5}) {
    EXPECT_TRUE(
        ValidateEnsemble(testing::RandomEnsemble(rng, 10, 31, 20, outputs)).ok());
  }
  Ensemble stumps;
  stumps.num_features = 0;
  stumps.trees.resize(3);
  for (Tree& tree : stumps.trees) tree.leaf_value = {0.25};
  EXPECT_TRUE(ValidateEnsemble(stumps).ok());
  Ensemble linear;
  linear.num_features = 3;
  linear.linear_weights = {1, 2, 3};
  EXPECT_TRUE(ValidateEnsemble(linear).ok());
}

TEST(ValidateEnsembleTest, ChecksZeroAsMissingFlags) {
  Ensemble model = SmallModel();
  model.trees[1].zero_as_missing = {0, 1};
  EXPECT_TRUE(ValidateEnsemble(model).ok());
  model.trees[1].zero_as_missing = {1};
  ExpectInvalid(model, "tree 1: 1 zero_as_missing flags for 2 internal nodes");
  model.trees[1].zero_as_missing = {0, 2};
  ExpectInvalid(model, "tree 1 node 1: zero_as_missing 2 is not 0 or 1");
}

// Model files store text in protobuf string fields, which must be UTF-8: a
// model with other bytes in a name would be written but not read back.
TEST(ValidateEnsembleTest, RejectsTextThatIsNotUtf8) {
  Ensemble model = SmallModel();
  model.feature_names = {"caf\xc3\xa9", "bm25"};
  model.objective = "plrank";
  model.parameters["train"] = "/data/caf\xc3\xa9.txt";
  EXPECT_TRUE(ValidateEnsemble(model).ok());
  EXPECT_TRUE(SerializeModel(model).ok());

  Ensemble bad_name = model;
  bad_name.feature_names[1] = "C\xff";
  ExpectInvalid(bad_name,
                "feature name 1 \"C\\xff\" is not valid UTF-8 (model files "
                "store text as UTF-8)");
  absl::StatusOr<std::string> bytes = SerializeModel(bad_name);
  ASSERT_FALSE(bytes.ok());
  EXPECT_THAT(bytes.status().message(), HasSubstr("feature name 1"));

  Ensemble bad_objective = model;
  bad_objective.objective = "lightgbm:\xe9";
  ExpectInvalid(bad_objective, "objective \"lightgbm:\\xe9\" is not valid");
  Ensemble bad_value = model;
  bad_value.parameters["train"] = "/data/caf\xe9.txt";
  ExpectInvalid(bad_value, "value of parameter train");
  Ensemble bad_key = model;
  bad_key.parameters["\xc0\xaf"] = "1";
  ExpectInvalid(bad_key, "parameter name");
  Ensemble bad_metric = model;
  bad_metric.history.push_back({1, 0.5, {{"ndcg@\x80", 0.5}}, {}});
  ExpectInvalid(bad_metric, "metric name");
  Ensemble bad_hash = model;
  bad_hash.valid_data_hash = "\xed\xa0\x80";
  ExpectInvalid(bad_hash, "validation data hash");
}

// A model file is untrusted: its declared feature count is capped, since
// nothing in the payload needs to back it.
TEST(ValidateEnsembleTest, RejectsDeclaredFeatureCountsAboveTheCap) {
  Ensemble model = SmallModel();
  model.num_features = kMaxModelFeatures;
  EXPECT_TRUE(ValidateEnsemble(model).ok());
  model.num_features = kMaxModelFeatures + 1;
  ExpectInvalid(model, "above the limit of 16777216 features");
  model.num_features = 50000000;
  ExpectInvalid(model, "num_features 50000000 is above the limit");
}

TEST(ValidateEnsembleTest, RejectsBadChildren) {
  Ensemble model = SmallModel();
  model.trees[1].left_child[0] = 5;
  ExpectInvalid(model, "tree 1 node 0: left child 5 outside");

  model = SmallModel();
  model.trees[1].right_child[1] = ~7;
  ExpectInvalid(model, "tree 1 node 1: right child is leaf 7");

  model = SmallModel();
  model.trees[0].left_child[1] = 0;  // cycle back to the root
  ExpectInvalid(model, "tree 0 node 1: left child 0 is reached twice");

  model = SmallModel();
  model.trees[0].left_child[0] = 1;
  model.trees[0].right_child[0] = 1;  // shared subtree
  ExpectInvalid(model, "reached twice");

  model = SmallModel();
  model.trees[0].right_child[1] = ~0;  // leaf 0 twice, leaf 1 orphaned
  ExpectInvalid(model, "leaf 0 is referenced twice");

  model = SmallModel();
  // Root points only at leaves; node 1 is an orphan.
  model.trees[0].left_child[0] = ~0;
  model.trees[0].right_child[0] = ~2;
  model.trees[0].left_child[1] = ~1;
  model.trees[0].right_child[1] = ~1;
  ExpectInvalid(model, "tree 0 node 1");
}

// Each leaf finite, their sum over the trees not: scores would be inf.
TEST(ValidateEnsembleTest, RejectsLeavesThatSumToInfinity) {
  Ensemble model = SmallModel();
  for (Tree& tree : model.trees) {
    for (double& value : tree.leaf_value) value = 1e308;
  }
  ExpectInvalid(model, "output 0: the leaf values of its trees can add up to "
                       "an infinite score");
  model = SmallModel();
  model.trees[0].leaf_value[0] = 1e300;  // large but finite in total
  EXPECT_TRUE(ValidateEnsemble(model).ok());
}

TEST(ValidateEnsembleTest, RejectsBadValuesAndShapes) {
  Ensemble model = SmallModel();
  model.trees[0].split_feature[1] = 2;
  ExpectInvalid(model, "tree 0 node 1: split feature 2 outside [0, 2)");

  model = SmallModel();
  model.trees[0].split_feature[1] = -1;
  ExpectInvalid(model, "split feature -1");

  model = SmallModel();
  model.trees[1].threshold[0] = INFINITY;
  ExpectInvalid(model, "tree 1 node 0: threshold");

  model = SmallModel();
  model.trees[1].leaf_value[2] = NAN;
  ExpectInvalid(model, "tree 1: leaf 2");

  model = SmallModel();
  model.trees[0].threshold.pop_back();
  ExpectInvalid(model, "disagree in length");

  model = SmallModel();
  model.trees[0].leaf_value.push_back(1.0);
  ExpectInvalid(model, "4 leaves for 2 internal nodes");

  model = SmallModel();
  model.trees[0].leaf_count = {1, 2};
  ExpectInvalid(model, "leaf counts");

  model = SmallModel();
  model.base_score = {NAN};
  ExpectInvalid(model, "base score 0 is not finite");

  model = SmallModel();
  model.linear_weights = {1.0, INFINITY};
  ExpectInvalid(model, "linear weight 1");

  model = SmallModel();
  model.linear_weights = {1.0};
  ExpectInvalid(model, "1 linear weights for 2 features");

  model = SmallModel();
  model.feature_names = {"a"};
  ExpectInvalid(model, "feature names");

  model = SmallModel();
  model.trees.clear();
  ExpectInvalid(model, "neither trees nor linear weights");

  model = SmallModel();
  model.best_iteration = 3;
  ExpectInvalid(model, "best_iteration 3");
}

TEST(ValidateEnsembleTest, RejectsInconsistentOutputs) {
  Ensemble model = SmallModel();
  model.num_outputs = 2;
  ExpectInvalid(model, "identity transform needs exactly 1 output");

  model.transform = ScoreTransform::kExpectedRelevance;
  EXPECT_TRUE(ValidateEnsemble(model).ok());
  model.base_score = {0.0};
  ExpectInvalid(model, "1 base scores for 2 outputs");

  model = SmallModel();
  model.transform = ScoreTransform::kExpectedRelevance;
  ExpectInvalid(model, "needs >= 2 outputs");

  model = SmallModel();
  model.trees.push_back(SmallTree());
  model.num_outputs = 2;
  model.transform = ScoreTransform::kExpectedRelevance;
  ExpectInvalid(model, "3 trees is not a multiple of num_outputs 2");

  model = SmallModel();
  model.num_outputs = 0;
  ExpectInvalid(model, "num_outputs 0");
}

}  // namespace
}  // namespace plrank
