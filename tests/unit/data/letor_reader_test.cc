#include "core/data/letor_reader.h"

#include "core/data/dense_budget.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/text_files.h"

namespace plrank {
namespace {

using ::plrank::testing::TempPath;
using ::plrank::testing::WriteText;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<Dataset> Parse(const std::string& text,
                              const ReadOptions& options = {},
                              ReadStats* stats = nullptr) {
  return ParseLetor(text, "rank.train", options, stats);
}

// The message of a failed parse; the test fails when the parse succeeds.
std::string ErrorOf(const std::string& text, const ReadOptions& options = {}) {
  absl::StatusOr<Dataset> data = Parse(text, options);
  EXPECT_FALSE(data.ok()) << "parse unexpectedly succeeded:\n" << text;
  return data.ok() ? "" : std::string(data.status().message());
}

TEST(LetorReaderTest, ParsesColumnsLabelsAndQueries) {
  ReadStats stats;
  absl::StatusOr<Dataset> data = Parse(
      "2 qid:7 1:0.5 3:-1.25 # doc a\n"
      "0 qid:7 2:4\n"
      "1 qid:9 3:1e-3\n",
      {}, &stats);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->num_features, 3);
  EXPECT_THAT(data->labels, ElementsAre(2, 0, 1));
  EXPECT_THAT(data->query_offsets, ElementsAre(0, 2, 3));
  EXPECT_THAT(data->query_ids, ElementsAre("7", "9"));
  EXPECT_THAT(data->features,
              ElementsAre(0.5f, 0, 0, 0, 4, 0, -1.25f, 0, 1e-3f));
  EXPECT_EQ(stats.lines, 3);
  EXPECT_EQ(stats.missing_values, 0);
}

TEST(LetorReaderTest, AcceptsUnsortedIndices) {
  absl::StatusOr<Dataset> data = Parse("1 qid:1 3:3 1:1 2:2\n");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->features, ElementsAre(1, 2, 3));
}

// One hostile token must not make the reader allocate a matrix that wide.
TEST(LetorReaderTest, FeatureIndexAboveTheCapIsAnError) {
  const std::string message =
      ErrorOf("1 qid:1 1:0.5\n0 qid:1 16777216:0.5\n");
  EXPECT_THAT(message, HasSubstr("rank.train:2:"));
  EXPECT_THAT(message, HasSubstr("feature index 16777216 above "
                                 "--max_feature_index=100000"));
  ReadOptions narrow;
  narrow.max_feature_index = 5;
  EXPECT_TRUE(Parse("1 qid:1 5:1\n0 qid:1 1:2\n", narrow).ok());
  EXPECT_THAT(ErrorOf("1 qid:1 6:1\n", narrow),
              HasSubstr("above --max_feature_index=5"));
  // An explicit --num_features is the cap instead.
  ReadOptions wide;
  wide.num_features = 200000;
  wide.max_feature_index = 5;
  absl::StatusOr<Dataset> data = Parse("1 qid:1 150000:1\n0 qid:1 1:2\n", wide);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->num_features, 200000);
  ReadOptions bad;
  bad.max_feature_index = 0;
  EXPECT_THAT(ErrorOf("1 qid:1 1:1\n", bad), HasSubstr("max_feature_index"));
}

TEST(DenseBudgetTest, RefusesAMatrixLargerThanWhatIsAvailable) {
  const absl::Status too_big =
      CheckDenseMatrixFits(1000, 1000, 1000000, "big.txt", "hint here");
  EXPECT_EQ(too_big.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(too_big.message()),
              HasSubstr("big.txt: the dense feature matrix needs 0.00 GB "
                        "(1000 documents x 1000 features)"));
  EXPECT_THAT(std::string(too_big.message()), HasSubstr("hint here"));
  EXPECT_TRUE(CheckDenseMatrixFits(10, 10, 1000000, "f", "").ok());
  EXPECT_TRUE(CheckDenseMatrixFits(1000, 1000, -1, "f", "").ok());  // unknown
  EXPECT_GT(AvailableMemoryBytes(), 0);  // /proc/meminfo exists here
}

TEST(LetorReaderTest, RepeatedIndexIsAnErrorByDefault) {
  const std::string message = ErrorOf("0 qid:1 1:1\n0 qid:1 17:1 2:0 17:2\n");
  EXPECT_THAT(message, HasSubstr("rank.train:2:"));
  EXPECT_THAT(message, HasSubstr("feature 17 repeated; pass "
                                 "--duplicate_features=last to keep the last "
                                 "value"));
}

TEST(LetorReaderTest, RepeatedIndexLastWinsWhenAsked) {
  ReadOptions options;
  options.duplicates = DuplicateFeaturePolicy::kLastWins;
  ReadStats stats;
  absl::StatusOr<Dataset> data =
      Parse("0 qid:1 2:1 2:5 1:0\n0 qid:1 1:3 1:4 1:6\n", options, &stats);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->features, ElementsAre(0, 6, 5, 0));
  EXPECT_EQ(stats.duplicate_features, 3);
}

TEST(LetorReaderTest, MissingValueSpellingsBecomeNaN) {
  ReadStats stats;
  absl::StatusOr<Dataset> data =
      Parse("0 qid:1 1:NULL 2:nan 3:NaN 4:null 5:NAN 6:2\n", {}, &stats);
  ASSERT_TRUE(data.ok()) << data.status();
  for (int f = 0; f < 5; ++f) EXPECT_TRUE(std::isnan(data->value(0, f))) << f;
  EXPECT_EQ(data->value(0, 5), 2.0f);
  EXPECT_EQ(stats.missing_values, 5);
}

TEST(LetorReaderTest, InfinityIsAnError) {
  for (const char* value : {"inf", "-inf", "Infinity", "1e999"}) {
    const std::string message =
        ErrorOf(std::string("0 qid:1 1:1\n\n0 qid:1 4:") + value + "\n");
    EXPECT_THAT(message, HasSubstr("rank.train:3:")) << value;
    EXPECT_THAT(message, HasSubstr("feature 4")) << value;
  }
}

TEST(LetorReaderTest, BadIndicesAreErrors) {
  EXPECT_THAT(ErrorOf("0 qid:1 0:1\n"),
              HasSubstr("rank.train:1: feature index 0 is not positive"));
  EXPECT_THAT(ErrorOf("0 qid:1 1:1\n0 qid:1 -3:1\n"),
              HasSubstr("rank.train:2: feature index -3 is not positive"));
  EXPECT_THAT(ErrorOf("0 qid:1 abc:1\n"),
              HasSubstr("rank.train:1: bad feature index 'abc'"));
  EXPECT_THAT(ErrorOf("0 qid:1 1.5:1\n"),
              HasSubstr("rank.train:1: bad feature index '1.5'"));
  EXPECT_THAT(ErrorOf("0 qid:1 99999999999:1\n"),
              HasSubstr("rank.train:1: feature index 99999999999 is too large"));
  EXPECT_THAT(ErrorOf("0 qid:1 12\n"),
              HasSubstr("rank.train:1: expected <index>:<value>, got '12'"));
  EXPECT_THAT(ErrorOf("0 qid:1 3:\n"),
              HasSubstr("rank.train:1: feature 3 has no value"));
  EXPECT_THAT(ErrorOf("0 qid:1 3:0.5x\n"),
              HasSubstr("rank.train:1: bad value '0.5x' for feature 3"));
}

TEST(LetorReaderTest, NumFeaturesCapsAndFixesTheWidth) {
  ReadOptions options;
  options.num_features = 5;
  absl::StatusOr<Dataset> data = Parse("0 qid:1 2:1\n", options);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->num_features, 5);
  EXPECT_EQ(data->features.size(), 5u);
  const std::string message = ErrorOf("0 qid:1 2:1\n1 qid:1 6:1\n", options);
  EXPECT_THAT(message, HasSubstr("rank.train:2:"));
  EXPECT_THAT(message, HasSubstr("feature index 6 above --num_features=5"));
}

TEST(LetorReaderTest, WidthIsTheLargestIndexWhenNotGiven) {
  absl::StatusOr<Dataset> data = Parse("0 qid:1 2:1\n0 qid:1 9:1\n");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->num_features, 9);
}

TEST(LetorReaderTest, NonContiguousQueryIsAnErrorNamingBothPlaces) {
  const std::string message =
      ErrorOf("0 qid:a 1:1\n1 qid:a 1:2\n0 qid:b 1:3\n2 qid:a 1:4\n");
  EXPECT_THAT(message, HasSubstr("rank.train:4:"));
  EXPECT_THAT(message, HasSubstr("query 'a'"));
  EXPECT_THAT(message, HasSubstr("rank.train:1..2"));
  EXPECT_THAT(message, HasSubstr("--allow_noncontiguous_queries"));
}

TEST(LetorReaderTest, NonContiguousQueriesRegroupStablyWhenAllowed) {
  ReadOptions options;
  options.allow_noncontiguous_queries = true;
  absl::StatusOr<Dataset> data = Parse(
      "0 qid:a 1:1\n1 qid:b 1:2\n2 qid:a 1:3\n3 qid:c 1:4\n4 qid:b 1:5\n",
      options);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->query_ids, ElementsAre("a", "b", "c"));
  EXPECT_THAT(data->query_offsets, ElementsAre(0, 2, 4, 5));
  EXPECT_THAT(data->labels, ElementsAre(0, 2, 1, 4, 3));
  EXPECT_THAT(data->features, ElementsAre(1, 3, 2, 5, 4));
}

TEST(LetorReaderTest, LabelsMustBeIntegersInRange) {
  absl::StatusOr<Dataset> data =
      Parse("2.0 qid:1 1:1\n31 qid:1 1:1\n0 qid:1 1:1\n");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->labels, ElementsAre(2, 31, 0));
  EXPECT_THAT(ErrorOf("0 qid:1 1:1\n1.5 qid:1 1:1\n"),
              HasSubstr("rank.train:2: label '1.5' is not an integer"));
  EXPECT_THAT(ErrorOf("-1 qid:1 1:1\n"),
              HasSubstr("rank.train:1: label '-1' outside 0..31"));
  EXPECT_THAT(ErrorOf("32 qid:1 1:1\n"),
              HasSubstr("rank.train:1: label '32' outside 0..31"));
  EXPECT_THAT(ErrorOf("abc qid:1 1:1\n"),
              HasSubstr("rank.train:1: bad label 'abc'"));
  EXPECT_THAT(ErrorOf("nan qid:1 1:1\n"),
              HasSubstr("rank.train:1: bad label 'nan'"));
}

TEST(LetorReaderTest, SkipsBlankAndCommentLinesAndHandlesCrlf) {
  ReadStats stats;
  absl::StatusOr<Dataset> data = Parse(
      "# header comment\r\n\r\n  \t\n1 qid:1 1:0.5\r\n#x\n0 qid:1 2:3 #c\r\n"
      "2 qid:2 1:1",  // no final newline
      {}, &stats);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->labels, ElementsAre(1, 0, 2));
  EXPECT_THAT(data->features, ElementsAre(0.5f, 0, 1, 0, 3, 0));
  EXPECT_EQ(stats.lines, 7);
}

TEST(LetorReaderTest, LineNumbersCountSkippedLines) {
  EXPECT_THAT(ErrorOf("# c\n\n0 qid:1 1:1\r\n\r\n0 qid:1 x:1\n"),
              HasSubstr("rank.train:5:"));
}

TEST(LetorReaderTest, MixingQidAndNoQidIsAnError) {
  EXPECT_THAT(ErrorOf("0 qid:1 1:1\n0 1:1\n"),
              HasSubstr("rank.train:2: line has no qid but the first "
                        "document (line 1) has one"));
  EXPECT_THAT(ErrorOf("\n0 1:1\n0 qid:1 1:1\n"),
              HasSubstr("rank.train:3: line has a qid but the first "
                        "document (line 2) has none"));
}

TEST(LetorReaderTest, NoQidWithoutQueryFileIsAnError) {
  const std::string message = ErrorOf("# c\n0 1:1\n1 2:1\n");
  EXPECT_THAT(message, HasSubstr("rank.train:2:"));
  EXPECT_THAT(message, HasSubstr("no qid"));
  EXPECT_THAT(message, HasSubstr("rank.train.query"));
  // Names what exists: the group files beside the data, not a flag.
  EXPECT_THAT(message, HasSubstr("rank.train.group"));
  EXPECT_THAT(message, Not(HasSubstr("--query_file")));
}

TEST(LetorReaderTest, EmptyInputHasNoDocuments) {
  for (const char* text : {"", "\n\n", "# only a comment\n"}) {
    EXPECT_THAT(ErrorOf(text), HasSubstr("rank.train: no documents")) << text;
  }
}

TEST(LetorReaderTest, EmptyQidIsAnError) {
  EXPECT_THAT(ErrorOf("0 qid: 1:1\n"), HasSubstr("rank.train:1: empty qid"));
}

TEST(LetorReaderTest, FloatValuesMatchFromChars) {
  absl::StatusOr<Dataset> data =
      Parse("0 qid:1 1:0.1 2:-7.25e+02 3:+4 4:.5 5:1e-40 6:3.4028235e38\n");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->features,
              ElementsAre(0.1f, -725.0f, 4.0f, 0.5f, 1e-40f, 3.4028235e38f));
}

TEST(LetorFileTest, ReadsQueryFileBesideTheData) {
  const std::string path = TempPath("grouped.txt");
  WriteText(path, "0 1:1\n1 1:2\n2 2:3\n");
  WriteText(path + ".query", "2\n\n1\n");
  ReadStats stats;
  absl::StatusOr<Dataset> data = ReadLetorFile(path, {}, &stats);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->query_offsets, ElementsAre(0, 2, 3));
  EXPECT_THAT(data->query_ids, ElementsAre("0", "1"));
  EXPECT_EQ(data->num_features, 2);
  EXPECT_EQ(stats.bytes, 18);
}

// XGBoost names the same file <data>.group; .query wins when both exist.
TEST(LetorFileTest, ReadsXgboostGroupFileBesideTheData) {
  const std::string path = TempPath("xgb_grouped.txt");
  WriteText(path, "0 1:1\n1 1:2\n2 2:3\n");
  WriteText(path + ".group", "1\n2\n");
  absl::StatusOr<Dataset> data = ReadLetorFile(path, {});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->query_offsets, ElementsAre(0, 1, 3));

  WriteText(path + ".query", "2\n1\n");
  data = ReadLetorFile(path, {});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->query_offsets, ElementsAre(0, 2, 3));

  WriteText(path + ".group", "1\nx\n");
  std::filesystem::remove(path + ".query");
  data = ReadLetorFile(path, {});
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(), HasSubstr(path + ".group:2"));
}

TEST(LetorFileTest, QuerySizesMustSumToTheDocumentCount) {
  const std::string path = TempPath("short.txt");
  WriteText(path, "0 1:1\n1 1:2\n2 2:3\n");
  WriteText(path + ".query", "1\n1\n");
  absl::StatusOr<Dataset> data = ReadLetorFile(path, {});
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(),
              HasSubstr(path + ".query:2: group sizes sum to 2 but " + path +
                        " has 3 documents"));
  WriteText(path + ".query", "2\n5\n");
  data = ReadLetorFile(path, {});
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(),
              HasSubstr(path + ".query:2: group sizes reach 7"));
}

TEST(LetorFileTest, BadQueryFileLinesAreErrors) {
  const std::string path = TempPath("bad_group.txt");
  WriteText(path, "0 1:1\n1 1:2\n");
  for (const char* group : {"1\nx\n", "1\n0\n1\n", "1\n-1\n", "1 1\n"}) {
    WriteText(path + ".query", group);
    absl::StatusOr<Dataset> data = ReadLetorFile(path, {});
    ASSERT_FALSE(data.ok()) << group;
    EXPECT_THAT(data.status().message(), HasSubstr(path + ".query:"))
        << group;
  }
}

TEST(LetorFileTest, ExplicitQueryFileIsUsedAndRefusedWithQid) {
  const std::string path = TempPath("explicit.txt");
  const std::string groups = TempPath("explicit.groups");
  WriteText(path, "0 1:1\n1 1:2\n2 2:3\n");
  WriteText(groups, "1\n2\n");
  ReadOptions options;
  options.query_file = groups;
  absl::StatusOr<Dataset> data = ReadLetorFile(path, options);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->query_offsets, ElementsAre(0, 1, 3));

  WriteText(path, "0 qid:1 1:1\n");
  data = ReadLetorFile(path, options);
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(), HasSubstr(path + ":1: lines carry qid"));
}

TEST(LetorFileTest, EmptyFileHasNoDocuments) {
  const std::string path = TempPath("empty.txt");
  WriteText(path, "");
  absl::StatusOr<Dataset> data = ReadLetorFile(path, {});
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(), HasSubstr(path + ": no documents"));
}

TEST(LetorFileTest, MissingFileNamesThePath) {
  absl::StatusOr<Dataset> data = ReadLetorFile(TempPath("absent.txt"), {});
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(), HasSubstr("absent.txt"));
}

}  // namespace
}  // namespace plrank

namespace plrank {
namespace {

// Issue 39 item 11: lone-CR line ends were read as one document (exit 0),
// and a UTF-8 byte order mark gave "bad label '0'".
TEST(LetorReaderLineEndsTest, LoneCarriageReturnsAreRefusedWithTheLine) {
  const std::string error =
      ErrorOf("0 qid:1 1:0.5\r1 qid:1 1:0.25\r0 qid:2 1:0.1\r");
  EXPECT_THAT(error, HasSubstr("rank.train:1: carriage return inside the line"));
  // CRLF is fine.
  absl::StatusOr<Dataset> crlf = Parse("0 qid:1 1:0.5\r\n1 qid:1 1:0.25\r\n");
  ASSERT_TRUE(crlf.ok()) << crlf.status();
  EXPECT_EQ(crlf->labels.size(), 2u);
}

TEST(LetorReaderLineEndsTest, Utf8ByteOrderMarkIsSkipped) {
  absl::StatusOr<Dataset> data =
      Parse("\xEF\xBB\xBF" "0 qid:1 1:0.5\n1 qid:1 1:0.25\n");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->labels.size(), 2u);
  EXPECT_EQ(data->labels[0], 0);
}

}  // namespace
}  // namespace plrank
