#include "server/server_config.h"

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace plrank::server {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<v1::ServerConfig> LoadText(const std::string& text) {
  plrank::testing::TempDir dir;
  const std::string path = dir.File("config.txt");
  std::ofstream(path) << text;
  return LoadServerConfig(path);
}

TEST(ServerConfigTest, ParsesPoliciesAndLabels) {
  auto config = LoadText(R"pb(
    models {
      name: "web"
      version_policy { latest { num_versions: 3 } }
      version_labels { key: "stable" value: 2 }
    }
    models { name: "news" version_policy { specific { versions: [ 1, 5 ] } } }
  )pb");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->models_size(), 2);
  EXPECT_EQ(config->models(0).version_policy().latest().num_versions(), 3u);
  EXPECT_EQ(config->models(0).version_labels().at("stable"), 2);
  EXPECT_EQ(config->models(1).version_policy().specific().versions_size(), 2);
}

TEST(ServerConfigTest, RejectsBadConfigsNamingTheProblem) {
  EXPECT_THAT(LoadText("models { name: ").status().message(),
              HasSubstr("line"));
  EXPECT_THAT(LoadText("models { name: 'a b' }").status().message(),
              HasSubstr("invalid model name"));
  EXPECT_THAT(LoadText("models { name: 'a' } models { name: 'a' }")
                  .status()
                  .message(),
              HasSubstr("twice"));
  EXPECT_THAT(
      LoadText("models { name: 'a' version_policy { specific { versions: 0 } "
               "} }")
          .status()
          .message(),
      HasSubstr("not a positive"));
  EXPECT_THAT(LoadText("models { name: 'a' version_labels { key: 'x' value: "
                       "-2 } }")
                  .status()
                  .message(),
              HasSubstr("label 'x'"));
  EXPECT_EQ(LoadServerConfig("/nonexistent/config.txt").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(ServerConfigTest, ModelNames) {
  EXPECT_TRUE(IsValidModelName("web-ranker_v2.1"));
  EXPECT_FALSE(IsValidModelName(""));
  EXPECT_FALSE(IsValidModelName(".hidden"));
  EXPECT_FALSE(IsValidModelName("a/b"));
  EXPECT_EQ(DefaultVersionPolicy().latest().num_versions(),
            kDefaultLatestVersions);
}

}  // namespace
}  // namespace plrank::server
