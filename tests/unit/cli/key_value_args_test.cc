#include "trainer/cli/key_value_args.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank::cli {
namespace {

using ::testing::HasSubstr;

TEST(ConfigTextTest, LightGbmSyntaxWithComments) {
  absl::StatusOr<std::vector<KeyValueArg>> args = ParseConfigText(
      "# a comment\n"
      "task = train\n"
      "  num_leaves=15   # trailing comment\n"
      "\n"
      "data = /tmp/train.txt\r\n"
      "metric =\n",
      "train.conf");
  ASSERT_TRUE(args.ok()) << args.status();
  ASSERT_EQ(args->size(), 4u);
  EXPECT_EQ((*args)[0].key, "task");
  EXPECT_EQ((*args)[0].value, "train");
  EXPECT_EQ((*args)[0].origin, "train.conf:2");
  EXPECT_EQ((*args)[1].key, "num_leaves");
  EXPECT_EQ((*args)[1].value, "15");
  EXPECT_EQ((*args)[2].value, "/tmp/train.txt");
  EXPECT_EQ((*args)[3].key, "metric");
  EXPECT_EQ((*args)[3].value, "");
}

TEST(ConfigTextTest, MalformedLinesNameFileAndLine) {
  absl::StatusOr<std::vector<KeyValueArg>> args =
      ParseConfigText("a=1\nnum_leaves 15\n", "c.conf");
  ASSERT_FALSE(args.ok());
  EXPECT_THAT(args.status().message(),
              HasSubstr("c.conf:2: expected key = value, got 'num_leaves 15'"));
  args = ParseConfigText(" = 3\n", "c.conf");
  ASSERT_FALSE(args.ok());
  EXPECT_THAT(args.status().message(), HasSubstr("c.conf:1: no key before '='"));
}

TEST(ConfigTextTest, MissingConfigFileIsNotFound) {
  absl::StatusOr<std::vector<KeyValueArg>> args =
      ReadConfigFile("/nonexistent/train.conf");
  ASSERT_FALSE(args.ok());
  EXPECT_THAT(args.status().message(), HasSubstr("/nonexistent/train.conf"));
}

}  // namespace
}  // namespace plrank::cli
