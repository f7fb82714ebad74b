#include "server/lifecycle/server_config.h"

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
    models {
      name: "news"
      version_policy { specific { versions: [ 1, 5 ] } }
    }
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
  EXPECT_THAT(
      LoadText("models { name: 'a' } models { name: 'a' }").status().message(),
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
TEST(ServerConfigTest, AcceptsShadowByVersionOrLabel) {
  auto config = LoadText(R"pb(
    models { name: "web" shadow_version: 4 shadow_fraction: 0.25 }
    models {
      name: "news"
      version_labels { key: "canary" value: 3 }
      shadow_label: "canary"
      shadow_fraction: 1
    }
    models { name: "paused" shadow_version: 2 }
  )pb");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->models(0).shadow_version(), 4);
  EXPECT_EQ(config->models(0).shadow_fraction(), 0.25);
  EXPECT_EQ(config->models(1).shadow_label(), "canary");
  EXPECT_EQ(config->models(2).shadow_fraction(), 0.0);
}

TEST(ServerConfigTest, RejectsBadShadowSettingsNamingTheProblem) {
  const auto message = [](const std::string& text) {
    return std::string(LoadText(text).status().message());
  };
  EXPECT_THAT(message("models { name: 'a' shadow_version: 2 "
                      "shadow_fraction: 1.5 }"),
              HasSubstr("shadow_fraction 1.5 is not in [0, 1]"));
  EXPECT_THAT(message("models { name: 'a' shadow_version: 2 "
                      "shadow_fraction: -0.1 }"),
              HasSubstr("not in [0, 1]"));
  EXPECT_THAT(message("models { name: 'a' shadow_version: 2 "
                      "shadow_fraction: nan }"),
              HasSubstr("not in [0, 1]"));
  EXPECT_THAT(message("models { name: 'a' shadow_version: -3 }"),
              HasSubstr("shadow_version -3 is not a positive integer"));
  EXPECT_THAT(message("models { name: 'a' version_labels { key: 'c' value: 2 "
                      "} shadow_version: 2 shadow_label: 'c' }"),
              HasSubstr("not both"));
  EXPECT_THAT(message("models { name: 'a' shadow_fraction: 0.5 }"),
              HasSubstr("without shadow_version or shadow_label"));
  EXPECT_THAT(message("models { name: 'a' version_labels { key: 'c' value: 2 "
                      "} shadow_label: 'canry' shadow_fraction: 1 }"),
              HasSubstr("shadow_label 'canry' is not one of its "
                        "version_labels"));
  // The message names the model and the file.
  EXPECT_THAT(message("models { name: 'web' shadow_fraction: 2 "
                      "shadow_version: 1 }"),
              HasSubstr("model 'web'"));
}

}  // namespace plrank::server
