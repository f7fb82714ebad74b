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
  EXPECT_THAT(KnownObjectives(), ::testing::Contains("plrank"));
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

TEST(RegistryTest, RejectsBadOptions) {
  ObjectiveOptions options;
  options.pl_topk = 0;
  EXPECT_FALSE(MakeObjective(options).ok());
  options.pl_topk = 10;
  options.pl_permutations = 0;
  EXPECT_FALSE(MakeObjective(options).ok());
  options.pl_permutations = 3;
  options.pl_newton_damping = -1.0;
  EXPECT_FALSE(MakeObjective(options).ok());
}

}  // namespace
}  // namespace plrank
