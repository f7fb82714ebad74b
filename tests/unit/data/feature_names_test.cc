#include "core/data/feature_names.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(ReadFeatureNamesFile, LineINamesFeatureIAndBlanksStayUnnamed) {
  const std::string path = WriteFile("names_ok.txt", " bm25\r\n\ntitle len\n");
  absl::StatusOr<std::vector<std::string>> names =
      ReadFeatureNamesFile(path, 4);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(*names, ElementsAre("bm25", "", "title len", ""));
}

TEST(ReadFeatureNamesFile, MoreNamesThanFeaturesNamesFileAndLine) {
  const std::string path = WriteFile("names_long.txt", "a\nb\n\nc\n");
  absl::StatusOr<std::vector<std::string>> names =
      ReadFeatureNamesFile(path, 3);
  ASSERT_FALSE(names.ok());
  EXPECT_EQ(names.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(names.status().message(), HasSubstr(path + ":4:"));
  // Trailing blank lines beyond the width are harmless.
  const std::string padded = WriteFile("names_pad.txt", "a\nb\n\n\n\n");
  EXPECT_TRUE(ReadFeatureNamesFile(padded, 2).ok());
}

// Model files store names as UTF-8, so a Latin-1 name fails here, before
// training, rather than when the trained model is saved.
TEST(ReadFeatureNamesFile, NamesThatAreNotUtf8NameFileAndLine) {
  const std::string utf8 = WriteFile("names_utf8.txt", "bm25\ncaf\xc3\xa9\n");
  absl::StatusOr<std::vector<std::string>> names =
      ReadFeatureNamesFile(utf8, 2);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(*names, ElementsAre("bm25", "caf\xc3\xa9"));
  const std::string latin1 = WriteFile("names_latin1.txt", "bm25\ncaf\xe9\n");
  names = ReadFeatureNamesFile(latin1, 2);
  ASSERT_FALSE(names.ok());
  EXPECT_EQ(names.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(names.status().message(),
              HasSubstr(latin1 + ":2: feature name is not valid UTF-8"));
}

TEST(ReadFeatureNamesFile, MissingFileIsNotFoundAndNamed) {
  absl::StatusOr<std::vector<std::string>> names =
      ReadFeatureNamesFile(::testing::TempDir() + "/no_names.txt", 2);
  ASSERT_FALSE(names.ok());
  EXPECT_EQ(names.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(names.status().message(), HasSubstr("no_names.txt"));
}

}  // namespace
}  // namespace plrank
