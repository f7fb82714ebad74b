#include "core/objectives/registry.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

TEST(RegistryTest, MakesPlackettLuce) {
  ObjectiveOptions options;
  absl::StatusOr<std::unique_ptr<Objective>> objective = MakeObjective(options);
  ASSERT_TRUE(objective.ok()) << objective.status();
  EXPECT_EQ((*objective)->name(), "plrank");
  EXPECT_EQ((*objective)->num_outputs(), 1);
  EXPECT_THAT(TreeObjectives(), ::testing::Contains("plrank"));
}

TEST(RegistryTest, UnknownNameListsKnownOnes) {
  ObjectiveOptions options;
  options.name = "no-such-loss";
  absl::StatusOr<std::unique_ptr<Objective>> objective = MakeObjective(options);
  ASSERT_FALSE(objective.ok());
  EXPECT_EQ(objective.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(objective.status().message()),
              ::testing::HasSubstr("plrank"));
}

TEST(RegistryTest, LinearRankersAreNotTreeObjectives) {
  ObjectiveOptions linear;
  linear.name = "ca";
  absl::StatusOr<std::unique_ptr<Objective>> objective = MakeObjective(linear);
  ASSERT_FALSE(objective.ok());
  EXPECT_THAT(std::string(objective.status().message()),
              ::testing::HasSubstr("not a tree objective"));
  linear.name = "lambdarank";
  EXPECT_THAT(std::string(MakeObjective(linear).status().message()),
              ::testing::HasSubstr("use lambdamart"));
}

// Each objective declares how its outputs become one ranking score; only
// McRank's several outputs need a transform.
TEST(RegistryTest, EveryObjectiveDeclaresItsScoreTransform) {
  for (const std::string& name : TreeObjectives()) {
    ObjectiveOptions options;
    options.name = name;
    absl::StatusOr<std::unique_ptr<Objective>> objective =
        MakeObjective(options);
    ASSERT_TRUE(objective.ok()) << name << ": " << objective.status();
    EXPECT_EQ((*objective)->output_transform(),
              name == "mcrank" ? ScoreTransform::kExpectedRelevance
                               : ScoreTransform::kIdentity)
        << name;
  }
}

TEST(RegistryTest, RejectsBadOptions) {
  ObjectiveOptions options;
  EXPECT_TRUE(MakeObjective(options).ok());  // pl_topk 0: the whole ranking
  options.pl_topk = -1;
  EXPECT_FALSE(MakeObjective(options).ok());
  options.pl_topk = 10;
  // Sampled tie-breaks only exist with pl_ties=permutation.
  options.pl_permutations = 3;
  EXPECT_FALSE(MakeObjective(options).ok());
  options.pl_ties = "permutation";
  EXPECT_TRUE(MakeObjective(options).ok());
  options.pl_permutations = 0;
  EXPECT_FALSE(MakeObjective(options).ok());
  options.pl_permutations = 3;
  options.pl_newton_damping = -1.0;
  EXPECT_FALSE(MakeObjective(options).ok());
  options.pl_newton_damping = 0.01;
  options.pl_ties = "sampled";
  EXPECT_FALSE(MakeObjective(options).ok());
  options.pl_ties = "efron";
  options.pl_permutations = 1;
  options.pl_weighting = "dcg";
  EXPECT_FALSE(MakeObjective(options).ok());
}

TEST(RegistryTest, PaperOptionsAreThePapers) {
  const ObjectiveOptions paper = PaperObjectiveOptions(ObjectiveOptions());
  EXPECT_EQ(paper.pl_topk, 10);
  EXPECT_EQ(paper.pl_ties, "permutation");
  EXPECT_FALSE(paper.pl_stop_at_lowest_label);
  EXPECT_EQ(paper.pl_max_leaf_step, 100.0);
  absl::StatusOr<std::unique_ptr<Objective>> objective = MakeObjective(paper);
  ASSERT_TRUE(objective.ok());
  EXPECT_EQ((*objective)->name(), "plrank");
  // The paper fits its trees by least squares.
  EXPECT_FALSE((*objective)->prefers_newton_split_gain());
}

// --split_gain=auto asks the objective: PLRank's default (either tie
// handling) was tuned with the Newton gain, every other loss with least
// squares.
TEST(RegistryTest, ObjectivesDeclareTheirSplitGain) {
  for (const char* ties : {"efron", "permutation"}) {
    ObjectiveOptions plrank;
    plrank.pl_ties = ties;
    absl::StatusOr<std::unique_ptr<Objective>> objective =
        MakeObjective(plrank);
    ASSERT_TRUE(objective.ok()) << objective.status();
    EXPECT_TRUE((*objective)->prefers_newton_split_gain()) << ties;
  }
  for (const std::string& name : TreeObjectives()) {
    if (name == "plrank") continue;
    ObjectiveOptions other;
    other.name = name;
    absl::StatusOr<std::unique_ptr<Objective>> objective = MakeObjective(other);
    ASSERT_TRUE(objective.ok()) << name << ": " << objective.status();
    EXPECT_FALSE((*objective)->prefers_newton_split_gain()) << name;
  }
}

// --pl_weighting=auto: uniform pick weights below 25,000 training documents,
// position weights from there on; only PLRank's options change.
TEST(RegistryTest, AutoPickWeightingFollowsTheTrainingSize) {
  const ObjectiveOptions defaults;
  EXPECT_EQ(defaults.pl_weighting, "auto");
  EXPECT_EQ(ResolveAutoObjectiveOptions(defaults, 24'999).pl_weighting,
            "uniform");
  EXPECT_EQ(ResolveAutoObjectiveOptions(defaults, 25'000).pl_weighting,
            "position");
  ObjectiveOptions chosen;
  chosen.pl_weighting = "gain";
  EXPECT_EQ(ResolveAutoObjectiveOptions(chosen, 1'000'000).pl_weighting, "gain");
  ObjectiveOptions lambdamart;
  lambdamart.name = "lambdamart";
  EXPECT_EQ(ResolveAutoObjectiveOptions(lambdamart, 1'000'000).pl_weighting,
            "auto");
  // Unresolved, "auto" still builds (the small-data choice).
  EXPECT_TRUE(MakeObjective(defaults).ok());
  ObjectiveOptions bad;
  bad.pl_weighting = "sometimes";
  EXPECT_FALSE(MakeObjective(bad).ok());
}

// PlackettLuceOptions{} is the product's PLRank, the one ObjectiveOptions{}
// (the flags' defaults) builds; the paper is the named preset --pl_paper
// applies.
TEST(RegistryTest, PlackettLuceDefaultsAreTheProductsAndThePaperAPreset) {
  const PlackettLuceOptions product;
  const ObjectiveOptions options;
  EXPECT_EQ(options.pl_topk, product.topk);
  EXPECT_EQ(product.topk, 0);
  EXPECT_EQ(options.pl_ties, "efron");
  EXPECT_EQ(product.ties, PlTies::kEfron);
  EXPECT_TRUE(product.stop_at_lowest_label);
  EXPECT_EQ(product.newton_damping, 0.03);
  EXPECT_EQ(product.max_leaf_step, 0.6);
  EXPECT_TRUE(product.newton_split_gain);
  EXPECT_EQ(options.pl_newton_damping, product.newton_damping);
  EXPECT_EQ(options.pl_max_leaf_step, product.max_leaf_step);
  EXPECT_EQ(options.pl_newton_split_gain, product.newton_split_gain);

  const PlackettLuceOptions paper = PaperPlackettLuceOptions();
  EXPECT_EQ(paper.topk, 10);
  EXPECT_EQ(paper.permutations, 1);
  EXPECT_EQ(paper.ties, PlTies::kPermutation);
  EXPECT_EQ(paper.weighting, PlWeighting::kUniform);
  EXPECT_FALSE(paper.stop_at_lowest_label);
  EXPECT_EQ(paper.newton_damping, 1e-6);
  EXPECT_EQ(paper.max_leaf_step, 100.0);
  EXPECT_FALSE(paper.newton_split_gain);
  const ObjectiveOptions applied = PaperObjectiveOptions(options);
  EXPECT_EQ(applied.pl_topk, 10);
  EXPECT_EQ(applied.pl_ties, "permutation");
  EXPECT_EQ(applied.pl_weighting, "uniform");
  EXPECT_EQ(applied.pl_max_leaf_step, 100.0);
}

TEST(RegistryTest, TraitsNameWhatTheJobAsksOfAnObjective) {
  EXPECT_TRUE(TraitsOf("plrank").auto_learning_rate);
  EXPECT_TRUE(TraitsOf("plrank").position_bias);
  EXPECT_FALSE(TraitsOf("lambdamart").auto_learning_rate);
  EXPECT_TRUE(TraitsOf("lambdamart").position_bias);
  EXPECT_FALSE(TraitsOf("xendcg").position_bias);
  EXPECT_FALSE(TraitsOf("ca").auto_learning_rate);
}

}  // namespace
}  // namespace plrank
