#include "core/metrics/score_file.h"

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/data/dataset.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string WriteFile(const std::string& name, const std::string& contents) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << contents;
  return path;
}

TEST(ReadScoreFileTest, ReadsOneScorePerLine) {
  const std::string path =
      WriteFile("scores_ok.txt", "0.5\n-1.25\r\n  3e2 \n7");
  absl::StatusOr<std::vector<double>> scores = ReadScoreFile(path);
  ASSERT_TRUE(scores.ok()) << scores.status();
  EXPECT_THAT(*scores, ElementsAre(0.5, -1.25, 300.0, 7.0));
}

TEST(ReadScoreFileTest, AcceptsNan) {
  absl::StatusOr<std::vector<double>> scores =
      ReadScoreFile(WriteFile("scores_nan.txt", "1\nnan\n"));
  ASSERT_TRUE(scores.ok()) << scores.status();
  ASSERT_EQ(scores->size(), 2u);
  EXPECT_TRUE(std::isnan((*scores)[1]));
}

TEST(ReadScoreFileTest, EmptyFileHasNoScores) {
  absl::StatusOr<std::vector<double>> scores =
      ReadScoreFile(WriteFile("scores_empty.txt", ""));
  ASSERT_TRUE(scores.ok());
  EXPECT_TRUE(scores->empty());
}

TEST(ReadScoreFileTest, BadLineNamesFileAndLine) {
  const std::string path = WriteFile("scores_bad.txt", "1\n2\n0.3x\n4\n");
  absl::StatusOr<std::vector<double>> scores = ReadScoreFile(path);
  ASSERT_FALSE(scores.ok());
  EXPECT_EQ(scores.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(scores.status().message(), HasSubstr(path + ":3:"));
  EXPECT_THAT(scores.status().message(), HasSubstr("0.3x"));
}

TEST(ReadScoreFileTest, TwoColumnsAndBlankLinesAreErrors) {
  absl::StatusOr<std::vector<double>> two_columns =
      ReadScoreFile(WriteFile("scores_cols.txt", "1 2\n"));
  EXPECT_FALSE(two_columns.ok());
  const std::string blank_path = WriteFile("scores_blank.txt", "1\n\n2\n");
  absl::StatusOr<std::vector<double>> blank = ReadScoreFile(blank_path);
  ASSERT_FALSE(blank.ok());
  EXPECT_THAT(blank.status().message(), HasSubstr(blank_path + ":2:"));
}

TEST(ReadScoreFileTest, MissingFileIsNotFound) {
  absl::StatusOr<std::vector<double>> scores =
      ReadScoreFile(::testing::TempDir() + "/no_such_scores.txt");
  ASSERT_FALSE(scores.ok());
  EXPECT_EQ(scores.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(scores.status().message(), HasSubstr("no_such_scores.txt"));
}

TEST(WriteScoresInInputOrderTest, RoundTripsExactlyInInputLineOrder) {
  Dataset data;
  // Document i (grouped order) came from input line input_line_order[i].
  data.input_line_order = {2, 0, 3, 1};
  const std::vector<double> scores = {0.1, -2.5e-300, 1.0 / 3.0, 12345.678};
  const std::string path = ::testing::TempDir() + "/scores_written.txt";
  ASSERT_TRUE(WriteScoresInInputOrder(data, scores, path).ok());
  absl::StatusOr<std::vector<double>> read = ReadScoreFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  // Bit-exact: the shortest round-trip decimal form.
  EXPECT_EQ(*read, (std::vector<double>{-2.5e-300, 12345.678, 0.1, 1.0 / 3.0}));

  Dataset in_order;  // no regrouping: written as given
  ASSERT_TRUE(WriteScoresInInputOrder(in_order, scores, path).ok());
  read = ReadScoreFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, scores);
}

TEST(WriteScoresInInputOrderTest, RefusesADeviceTarget) {
  Dataset data;
  const std::vector<double> scores = {1.0};
  absl::Status status = WriteScoresInInputOrder(data, scores, "/dev/full");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("/dev/full"));
}

}  // namespace
}  // namespace plrank
