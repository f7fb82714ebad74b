#include "core/data/shard_files.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/data/letor_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/text_files.h"

namespace plrank {
namespace {

using ::plrank::testing::TempPath;
using ::plrank::testing::WriteText;

using ::testing::HasSubstr;

// Queries of 1..7 documents, a comment line and a blank line inside.
std::string LetorText() {
  std::string text = "# generated\n";
  for (int q = 0; q < 40; ++q) {
    for (int d = 0; d <= q % 7; ++d) {
      absl::StrAppend(&text, d % 3, " qid:", 100 + q, " 1:", q, " 2:", d,
                      q == 5 && d == 0 ? " # note" : "", "\n");
      if (q == 9 && d == 0) text += "\n# inside a query\n";
    }
  }
  return text;
}

TEST(ShardFilePath, ReplacesRankAndRanks) {
  EXPECT_TRUE(HasRankPlaceholder("d/train-{rank}.txt"));
  EXPECT_FALSE(HasRankPlaceholder("d/train-{ranks}.txt"));
  EXPECT_EQ(ShardFilePath("d/p-{rank}-of-{ranks}.txt", 2, 4), "d/p-2-of-4.txt");
  EXPECT_EQ(ShardFilePath("d/plain.txt", 1, 3), "d/plain.txt");
}

TEST(ShardByteRange, RangesTileTheFileAtQueryStartsForEveryRankCount) {
  const std::string path = TempPath("shard_ranges.txt");
  const std::string text = LetorText();
  WriteText(path, text);
  absl::StatusOr<Dataset> whole = ReadLetorFile(path, ReadOptions());
  ASSERT_TRUE(whole.ok()) << whole.status();
  for (int32_t ranks = 1; ranks <= 9; ++ranks) {
    int64_t expected_begin = 0;
    std::vector<std::string> ids;
    std::vector<int32_t> labels;
    for (int32_t rank = 0; rank < ranks; ++rank) {
      absl::StatusOr<ByteRange> range = ShardByteRange(path, rank, ranks);
      ASSERT_TRUE(range.ok()) << range.status();
      EXPECT_EQ(range->begin, expected_begin) << ranks << " ranks, " << rank;
      expected_begin = range->end;
      // A cut is the start of a line whose query differs from the last
      // data line before it.
      if (range->begin > 0 && range->begin < static_cast<int64_t>(text.size())) {
        EXPECT_EQ(text[range->begin - 1], '\n');
      }
      if (range->end == range->begin) continue;
      ReadOptions options;
      options.byte_begin = range->begin;
      options.byte_end = range->end;
      absl::StatusOr<Dataset> shard = ReadLetorFile(path, options);
      if (!shard.ok()) {
        // Only a share holding no data line (just comments) may fail.
        EXPECT_THAT(shard.status().message(), HasSubstr("no documents"));
        continue;
      }
      ids.insert(ids.end(), shard->query_ids.begin(), shard->query_ids.end());
      labels.insert(labels.end(), shard->labels.begin(), shard->labels.end());
    }
    EXPECT_EQ(expected_begin, static_cast<int64_t>(text.size()));
    // No query split, none lost, in file order.
    EXPECT_EQ(ids, whole->query_ids) << ranks << " ranks";
    EXPECT_EQ(labels, whole->labels) << ranks << " ranks";
  }
}

TEST(ShardByteRange, AQueryLargerThanAShareGoesWhereItStarts) {
  const std::string path = TempPath("shard_big_query.txt");
  std::string text = "1 qid:a 1:1\n";
  for (int d = 0; d < 200; ++d) absl::StrAppend(&text, d % 2, " qid:b 1:", d, "\n");
  text += "2 qid:c 1:5\n";
  WriteText(path, text);
  absl::StatusOr<ByteRange> first = ShardByteRange(path, 0, 3);
  absl::StatusOr<ByteRange> second = ShardByteRange(path, 1, 3);
  absl::StatusOr<ByteRange> third = ShardByteRange(path, 2, 3);
  ASSERT_TRUE(first.ok() && second.ok() && third.ok());
  // b starts in rank 0's share and runs past both nominal cuts.
  EXPECT_EQ(first->begin, 0);
  EXPECT_EQ(first->end, static_cast<int64_t>(text.size() - 12));
  EXPECT_EQ(second->begin, second->end);
  EXPECT_EQ(third->begin, first->end);
  EXPECT_EQ(third->end, static_cast<int64_t>(text.size()));
}

TEST(ShardByteRange, LinesWithoutQidAreAnErrorNamingTheFile) {
  const std::string path = TempPath("shard_no_qid.txt");
  std::string text;
  for (int d = 0; d < 50; ++d) absl::StrAppend(&text, d % 2, " 1:", d, "\n");
  WriteText(path, text);
  absl::StatusOr<ByteRange> range = ShardByteRange(path, 1, 2);
  ASSERT_FALSE(range.ok());
  EXPECT_THAT(range.status().message(), HasSubstr(path));
  EXPECT_THAT(range.status().message(), HasSubstr("qid:"));
  EXPECT_THAT(range.status().message(), HasSubstr("{rank}"));
}

TEST(ShardByteRange, ARangeReadNamesItsBytesInErrors) {
  const std::string path = TempPath("shard_bad_line.txt");
  WriteText(path, "1 qid:1 1:1\n1 qid:2 1:x\n");
  ReadOptions options;
  options.byte_begin = 12;
  options.byte_end = 24;
  absl::StatusOr<Dataset> shard = ReadLetorFile(path, options);
  ASSERT_FALSE(shard.ok());
  EXPECT_THAT(shard.status().message(),
              HasSubstr(absl::StrCat(path, " (bytes 12-24):1:")));
}

}  // namespace
}  // namespace plrank
