#include "core/pipeline/linear_trainers.h"

#include <string>

#include "absl/status/status.h"
#include "core/objectives/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

// The list in the message is the registries', linear rankers included, so
// it cannot drift from what --objective accepts.
TEST(LinearTrainersTest, EveryObjectiveNameIsKnownAndListed) {
  EXPECT_THAT(KnownObjectives(), ::testing::IsSupersetOf(LinearObjectives()));
  EXPECT_THAT(KnownObjectives(), ::testing::IsSupersetOf(TreeObjectives()));
  EXPECT_EQ(KnownObjectives().size(),
            TreeObjectives().size() + LinearObjectives().size());
  EXPECT_THAT(LinearObjectives(), ::testing::ElementsAre("ca", "listmle"));
  const absl::Status unknown = CheckObjectiveName("no-such-loss");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  for (const std::string& name : KnownObjectives()) {
    EXPECT_TRUE(CheckObjectiveName(name).ok()) << name;
    EXPECT_THAT(std::string(unknown.message()), ::testing::HasSubstr(name));
  }
  EXPECT_THAT(std::string(CheckObjectiveName("lambdarank").message()),
              ::testing::HasSubstr("use lambdamart"));
}

TEST(LinearTrainersTest, LinearRankersAreRegisteredTrainers) {
  for (const std::string& name : LinearObjectives()) {
    EXPECT_TRUE(IsLinearObjective(name));
    const LinearTrainer* trainer = FindLinearTrainer(name);
    ASSERT_NE(trainer, nullptr) << name;
    EXPECT_EQ(trainer->name, name);
    EXPECT_NE(trainer->train, nullptr);
    EXPECT_FALSE(trainer->own_flags.empty()) << name;
  }
  for (const std::string& name : TreeObjectives()) {
    EXPECT_FALSE(IsLinearObjective(name)) << name;
  }
  EXPECT_EQ(FindLinearTrainer("no-such-loss"), nullptr);
}

}  // namespace
}  // namespace plrank
