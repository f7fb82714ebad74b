#include "core/data/letor_writer.h"

#include <bit>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "core/data/datagen.h"
#include "core/data/file_io.h"
#include "core/data/letor_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;

// Bitwise equality, so NaN equals NaN and -0 differs from 0.
void ExpectSameDataset(const Dataset& a, const Dataset& b) {
  EXPECT_EQ(a.num_features, b.num_features);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.query_offsets, b.query_offsets);
  EXPECT_EQ(a.query_ids, b.query_ids);
  ASSERT_EQ(a.features.size(), b.features.size());
  size_t differing = 0;
  for (size_t i = 0; i < a.features.size(); ++i) {
    const bool same =
        std::isnan(a.features[i])
            ? std::isnan(b.features[i])
            : std::bit_cast<uint32_t>(a.features[i]) ==
                  std::bit_cast<uint32_t>(b.features[i]);
    differing += !same;
  }
  EXPECT_EQ(differing, 0u);
}

Dataset SmallDataset() {
  Dataset data;
  data.num_features = 3;
  data.labels = {2, 0, 1};
  data.query_offsets = {0, 2, 3};
  data.query_ids = {"q7", "9"};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  data.features = {0.1f, -2.5f, 1e-30f,   // feature 1
                   0.0f, nan,   3.0e38f,  // feature 2
                   123456.78f, 1.0f / 3.0f, -0.0f};
  return data;
}

TEST(LetorWriterTest, WritesDenseQidLines) {
  std::string text;
  ASSERT_TRUE(AppendLetorText(SmallDataset(), &text).ok());
  EXPECT_EQ(text,
            "2 qid:q7 1:0.1 2:0 3:123456.78\n"
            "0 qid:q7 1:-2.5 2:nan 3:0.33333334\n"
            "1 qid:9 1:1e-30 2:3e+38 3:-0\n");
}

TEST(LetorWriterTest, RoundTripsThroughTheReader) {
  const Dataset original = SmallDataset();
  const std::string path = ::testing::TempDir() + "/round_trip.txt";
  ASSERT_TRUE(WriteLetorFile(original, path).ok());
  ReadOptions options;
  options.num_features = original.num_features;
  absl::StatusOr<Dataset> read = ReadLetorFile(path, options);
  ASSERT_TRUE(read.ok()) << read.status();
  ExpectSameDataset(original, *read);
  // No temporary file is left beside the output.
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(path).parent_path())) {
    EXPECT_THAT(entry.path().filename().string(),
                ::testing::Not(HasSubstr("round_trip.txt.tmp")));
  }
}

TEST(LetorWriterTest, GeneratedDataRoundTrips) {
  DatagenOptions options;
  options.num_queries = 20;
  options.mean_docs_per_query = 15;
  options.num_features = 40;
  const Dataset original = GenerateDataset(options);
  std::string text;
  ASSERT_TRUE(AppendLetorText(original, &text).ok());
  absl::StatusOr<Dataset> read = ParseLetor(text, "generated", {});
  ASSERT_TRUE(read.ok()) << read.status();
  ExpectSameDataset(original, *read);
}

TEST(LetorWriterTest, RefusesInfinityAndInconsistentShapes) {
  Dataset data = SmallDataset();
  data.features[4] = std::numeric_limits<float>::infinity();
  EXPECT_THAT(WriteLetorFile(data, ::testing::TempDir() + "/inf.txt")
                  .message(),
              HasSubstr("infinite"));
  data = SmallDataset();
  data.features.pop_back();
  std::string text;
  EXPECT_FALSE(AppendLetorText(data, &text).ok());
}

TEST(LetorWriterTest, UnwritablePathIsAnError) {
  absl::Status status =
      WriteLetorFile(SmallDataset(), "/nonexistent-dir/sub/out.txt");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("/nonexistent-dir/sub/out.txt"));
}

}  // namespace
}  // namespace plrank
