// ReadLetorFile streams its file in line-aligned chunks and stores rows
// compactly (consecutive indices without an index per entry): the result
// must not depend on either.

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/data/letor_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/same_dataset.h"
#include "tests/testing/shared_data.h"
#include "tests/testing/text_files.h"

namespace plrank {
namespace {

using ::plrank::testing::TempPath;
using ::plrank::testing::WriteText;

using ::plrank::testing::SharedDataPath;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using ::plrank::testing::ExpectSameDataset;

TEST(LetorStreamingTest, EveryRowLayoutLandsInTheRightColumns) {
  const std::string path = TempPath("layouts.txt");
  WriteText(path,
            "1 qid:a 1:1 2:2 3:3 4:4\n"    // consecutive from feature 1
            "0 qid:a 2:5 3:6\n"            // consecutive from feature 2
            "2 qid:a 1:7 4:8\n"            // a gap
            "0 qid:b 4:9 1:10 2:11\n"      // unsorted
            "1 qid:b\n"                    // no entries
            "0 qid:b 3:nan 4:12\n"         // missing value, consecutive
            "1 qid:b 1:13 2:14 1:15\n");   // repeated, last wins
  ReadOptions options;
  options.duplicates = DuplicateFeaturePolicy::kLastWins;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t chunk_bytes : {1, 5, 24, 1 << 20}) {
    options.read_chunk_bytes = chunk_bytes;
    ReadStats stats;
    absl::StatusOr<Dataset> data = ReadLetorFile(path, options, &stats);
    ASSERT_TRUE(data.ok()) << data.status();
    EXPECT_EQ(data->num_features, 4);
    EXPECT_THAT(data->labels, ElementsAre(1, 0, 2, 0, 1, 0, 1));
    EXPECT_THAT(data->query_offsets, ElementsAre(0, 3, 7));
    EXPECT_THAT(data->query_ids, ElementsAre("a", "b"));
    const std::vector<std::vector<float>> rows = {
        {1, 2, 3, 4}, {0, 5, 6, 0}, {7, 0, 0, 8},  {10, 11, 0, 9},
        {0, 0, 0, 0}, {0, 0, nan, 12}, {15, 14, 0, 0}};
    for (size_t d = 0; d < rows.size(); ++d) {
      for (int f = 0; f < 4; ++f) {
        const float expected = rows[d][f];
        const float got = data->value(d, f);
        if (std::isnan(expected)) {
          EXPECT_TRUE(std::isnan(got)) << d << "," << f;
        } else {
          EXPECT_EQ(got, expected) << "document " << d << " feature " << f
                                   << " chunk " << chunk_bytes;
        }
      }
    }
    EXPECT_EQ(stats.lines, 7);
    EXPECT_EQ(stats.missing_values, 1);
    EXPECT_EQ(stats.duplicate_features, 1);
    EXPECT_EQ(stats.bytes, static_cast<int64_t>(std::ifstream(
                               path, std::ios::ate | std::ios::binary)
                                                    .tellg()));
  }
}

TEST(LetorStreamingTest, ErrorsNameTheLineWhateverTheChunkSize) {
  const std::string path = TempPath("bad-late.txt");
  std::string text;
  for (int i = 0; i < 200; ++i) text += "0 qid:1 1:0.5 2:0.25\n";
  text += "0 qid:1 1:oops\n";
  WriteText(path, text);
  for (size_t chunk_bytes : {3, 64, 1 << 20}) {
    ReadOptions options;
    options.read_chunk_bytes = chunk_bytes;
    absl::StatusOr<Dataset> data = ReadLetorFile(path, options);
    ASSERT_FALSE(data.ok());
    EXPECT_THAT(data.status().message(), HasSubstr(path + ":201: "))
        << chunk_bytes;
  }
}

TEST(LetorStreamingTest, NoncontiguousQueriesRegroupAcrossChunks) {
  const std::string path = TempPath("regroup.txt");
  WriteText(path,
            "1 qid:x 1:1\n0 qid:y 1:2\n2 qid:x 1:3\n0 qid:y 1:4\n");
  ReadOptions options;
  options.allow_noncontiguous_queries = true;
  options.read_chunk_bytes = 4;
  absl::StatusOr<Dataset> data = ReadLetorFile(path, options);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->query_ids, ElementsAre("x", "y"));
  EXPECT_THAT(data->labels, ElementsAre(1, 2, 0, 0));
  EXPECT_THAT(data->features, ElementsAre(1, 3, 2, 4));
  EXPECT_THAT(data->input_line_order, ElementsAre(0, 2, 1, 3));
}

// The real collections, streamed in small chunks, equal the same text
// parsed from memory in one piece.
TEST(LetorStreamingTest, RealFilesStreamedEqualParsedWhole) {
  for (const char* relative :
       {"MQ2008/S1.txt", "lightgbm-example/rank.train"}) {
    PLRANK_REQUIRE_SHARED_DATA(relative);
    const std::string path = SharedDataPath(relative);
    std::stringstream buffer;
    buffer << std::ifstream(path, std::ios::binary).rdbuf();
    ReadOptions whole_options;
    if (std::ifstream(path + ".query").good()) {
      whole_options.query_file = path + ".query";
    }
    absl::StatusOr<Dataset> whole =
        ParseLetor(buffer.str(), path, whole_options);
    ASSERT_TRUE(whole.ok()) << whole.status();
    for (size_t chunk_bytes : {size_t{100}, size_t{4096}, size_t{8} << 20}) {
      ReadOptions options;
      options.read_chunk_bytes = chunk_bytes;
      absl::StatusOr<Dataset> streamed = ReadLetorFile(path, options);
      ASSERT_TRUE(streamed.ok()) << streamed.status();
      ExpectSameDataset(*whole, *streamed,
                        std::string(relative) + " chunk " +
                            std::to_string(chunk_bytes));
    }
  }
}

}  // namespace
}  // namespace plrank
