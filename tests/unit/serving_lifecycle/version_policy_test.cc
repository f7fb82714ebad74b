#include "server/lifecycle/version_policy.h"

#include <limits>
#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

v1::VersionPolicy Latest(uint32_t n) {
  v1::VersionPolicy policy;
  policy.mutable_latest()->set_num_versions(n);
  return policy;
}

TEST(VersionPolicyTest, LatestTriesNewestFirstUpToN) {
  const VersionPlan plan = PlanVersions(Latest(2), {1, 4, 7});
  EXPECT_THAT(plan.candidates, ElementsAre(7, 4, 1));
  EXPECT_EQ(plan.max_versions, 2u);
  EXPECT_EQ(PolicyName(Latest(2)), "latest:2");
}

TEST(VersionPolicyTest, LatestZeroAndNoPolicyMeanOne) {
  EXPECT_EQ(PlanVersions(Latest(0), {1, 2}).max_versions, 1u);
  const VersionPlan plan = PlanVersions(v1::VersionPolicy(), {1, 2});
  EXPECT_THAT(plan.candidates, ElementsAre(2, 1));
  EXPECT_EQ(plan.max_versions, 1u);
  EXPECT_EQ(PolicyName(v1::VersionPolicy()), "latest:1");
}

TEST(VersionPolicyTest, AllWantsEveryVersionOnDisk) {
  v1::VersionPolicy policy;
  policy.mutable_all();
  const VersionPlan plan = PlanVersions(policy, {2, 3, 9});
  EXPECT_THAT(plan.candidates, ElementsAre(2, 3, 9));
  EXPECT_EQ(plan.max_versions, std::numeric_limits<size_t>::max());
  EXPECT_EQ(PolicyName(policy), "all");
}

TEST(VersionPolicyTest, SpecificWantsTheListedVersionsOnDisk) {
  v1::VersionPolicy policy;
  for (int64_t v : {9, 3, 5}) policy.mutable_specific()->add_versions(v);
  const VersionPlan plan = PlanVersions(policy, {1, 3, 5});
  EXPECT_THAT(plan.candidates, ElementsAre(3, 5));
  EXPECT_EQ(plan.max_versions, std::numeric_limits<size_t>::max());
  EXPECT_EQ(PolicyName(policy), "specific:9,3,5");
  EXPECT_THAT(PlanVersions(policy, {}).candidates, IsEmpty());
}

TEST(VersionPolicyTest, ShadowLabelNeverPromotes) {
  const std::map<std::string, int64_t> labels = {{"stable", 2}, {"canary", 4}};
  EXPECT_EQ(PromotingLabels(labels, "canary"),
            (std::map<std::string, int64_t>{{"stable", 2}}));
  EXPECT_EQ(PromotingLabels(labels, ""), labels);
}

TEST(VersionPolicyTest, ShadowTargetIsTheVersionOrTheLabelsVersion) {
  const std::map<std::string, int64_t> labels = {{"canary", 4}};
  EXPECT_EQ(ShadowTarget(7, "", labels), 7);
  EXPECT_EQ(ShadowTarget(0, "canary", labels), 4);
  EXPECT_EQ(ShadowTarget(0, "missing", labels), 0);
  EXPECT_EQ(ShadowTarget(0, "", labels), 0);
}

}  // namespace
}  // namespace plrank::server
