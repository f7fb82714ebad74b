#include "core/data/side_files.h"

#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Two queries: 3 + 2 documents.
Dataset FiveDocuments() {
  Dataset data;
  data.labels = {1, 0, 2, 0, 1};
  data.query_offsets = {0, 3, 5};
  data.query_ids = {"a", "b"};
  return data;
}

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(SideFilesTest, ParsesValuesSkippingBlankLinesAndComments) {
  absl::StatusOr<SideValues> parsed =
      ParseSideValues("# weights\n1\n\n0.5  # half\n2e0\n", "w", SideKind::kWeight);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->values, ElementsAre(1.0, 0.5, 2.0));
  EXPECT_THAT(parsed->lines, ElementsAre(2, 4, 5));
}

TEST(SideFilesTest, BadValuesNameFileAndLine) {
  auto message = [](const std::string& text, SideKind kind) {
    return std::string(ParseSideValues(text, "f.side", kind).status().message());
  };
  EXPECT_THAT(message("1\n-1\n", SideKind::kWeight), HasSubstr("f.side:2: bad weight '-1'"));
  EXPECT_THAT(message("1\nnan\n", SideKind::kWeight), HasSubstr("f.side:2:"));
  EXPECT_THAT(message("1\n2.5\n", SideKind::kPosition), HasSubstr("f.side:2: bad position"));
  EXPECT_THAT(message("-1\n", SideKind::kPosition), HasSubstr("f.side:1:"));
  EXPECT_TRUE(ParseSideValues("0\n", "f", SideKind::kPosition).ok());  // not shown
  EXPECT_THAT(message("0.5\n0\n", SideKind::kPropensity), HasSubstr("f.side:2: bad propensity"));
  EXPECT_THAT(message("1.5\n", SideKind::kPropensity), HasSubstr("(0, 1]"));
  EXPECT_THAT(message("1 2\n", SideKind::kWeight), HasSubstr("f.side:1: expected one weight per line"));
}

TEST(SideFilesTest, WeightBesideTheDataIsReadPerDocument) {
  const std::string data_path = Write("docs.txt", "");
  Write("docs.txt.weight", "1\n2\n3\n4\n5\n");
  Write("docs.txt.position", "1\n2\n3\n1\n2\n");
  Write("docs.txt.propensity", "1\n0.5\n0.25\n1\n0.5\n");
  Dataset data = FiveDocuments();
  std::vector<std::string> notes;
  ASSERT_TRUE(ReadSideFiles(data_path, {}, &data, &notes).ok());
  EXPECT_THAT(data.weights, ElementsAre(1, 2, 3, 4, 5));
  EXPECT_TRUE(data.query_weights.empty());
  EXPECT_THAT(data.positions, ElementsAre(1, 2, 3, 1, 2));
  EXPECT_THAT(data.propensities, ElementsAre(1, 0.5, 0.25, 1, 0.5));
  EXPECT_EQ(notes.size(), 3u);
}

TEST(SideFilesTest, OneWeightPerQueryIsTheQueryLevelForm) {
  const std::string data_path = Write("queries.txt", "");
  Write("queries.txt.weight", "2\n0.5\n");
  Dataset data = FiveDocuments();
  ASSERT_TRUE(ReadSideFiles(data_path, {}, &data, nullptr).ok());
  EXPECT_TRUE(data.weights.empty());
  EXPECT_THAT(data.query_weights, ElementsAre(2.0f, 0.5f));
  EXPECT_DOUBLE_EQ(QueryMetricWeight(data, 0), 2.0);
  EXPECT_TRUE(HasQueryMetricWeights(data));
}

TEST(SideFilesTest, ALineCountThatFitsNothingIsAnErrorNamingTheLine) {
  const std::string data_path = Write("short.txt", "");
  const std::string weight = Write("short.txt.weight", "1\n1\n1\n");
  Dataset data = FiveDocuments();
  const absl::Status status = ReadSideFiles(data_path, {}, &data, nullptr);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(weight + ":3: 3 weight values, but the data has 5 (one "
                        "per document) or 2 (one per query)"));
  const std::string data2 = Write("long.txt", "");
  const std::string position =
      Write("long.txt.position", "1\n2\n3\n4\n5\n6\n7\n");
  Dataset other = FiveDocuments();
  EXPECT_THAT(std::string(ReadSideFiles(data2, {}, &other, nullptr).message()),
              HasSubstr(position + ":6: 7 position values"));
}

TEST(SideFilesTest, ExplicitFileReplacesTheOneBeside) {
  const std::string data_path = Write("explicit.txt", "");
  Write("explicit.txt.weight", "bad\n");
  SideFileOptions options;
  options.weight_file = Write("my.weights", "1\n1\n1\n1\n0\n");
  Dataset data = FiveDocuments();
  ASSERT_TRUE(ReadSideFiles(data_path, options, &data, nullptr).ok());
  EXPECT_THAT(data.weights, ElementsAre(1, 1, 1, 1, 0));
  EXPECT_DOUBLE_EQ(QueryMetricWeight(data, 1), 0.5);
}

// D.marginals: k numbers per line (k may vary), zero-padded rows in stored
// order; bad values, over-full lines and a wrong line count name the line.
TEST(SideFilesTest, MarginalsBesideTheDataArePaddedRows) {
  const std::string data_path = Write("marg.txt", "");
  Write("marg.txt.marginals", "0.5 0.25\n0.5 0.5\n# c\n0 0.25\n1\n0 0\n");
  Dataset data = FiveDocuments();
  std::vector<std::string> notes;
  ASSERT_TRUE(ReadSideFiles(data_path, {}, &data, &notes).ok());
  EXPECT_EQ(data.marginal_positions, 2);
  EXPECT_THAT(data.marginals, ElementsAre(0.5, 0.25, 0.5, 0.5, 0, 0.25, 1, 0, 0, 0));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("position marginals of 5 documents"));
  auto message = [](const std::string& text) {
    Dataset d = FiveDocuments();
    return std::string(ParseMarginals(text, "m", &d).message());
  };
  EXPECT_THAT(message("0.5\n0.5\n1.5\n0\n0\n"), HasSubstr("m:3: bad marginal '1.5'"));
  EXPECT_THAT(message("0.5\n0.75 0.5\n0\n0\n0\n"), HasSubstr("m:2: the marginals sum to"));
  EXPECT_THAT(message("0\n0\n0\n0\n"), HasSubstr("4 marginals lines, but the data has 5"));
  EXPECT_THAT(message("0\n0\n0\n0\n0\n0\n"), HasSubstr("m:6: more lines"));
  Dataset regrouped = FiveDocuments();
  regrouped.input_line_order = {0, 2, 4, 1, 3};
  ASSERT_TRUE(ParseMarginals("0.1\n0.2\n0.3\n0.4\n0.5\n", "m", &regrouped).ok());
  EXPECT_THAT(regrouped.marginals, ElementsAre(0.1f, 0.3f, 0.5f, 0.2f, 0.4f));
}

// --marginals_file names the file instead of D.marginals; rows in memory
// (plrank.train's marginals=) are checked and stored as the file's are.
TEST(SideFilesTest, MarginalsFromAnExplicitFileOrRows) {
  const std::string data_path = Write("marg2.txt", "");
  Write("marg2.txt.marginals", "bad\n");
  SideFileOptions options;
  options.marginals_file = Write("my.marginals", "0.5\n0.25 0.5\n0\n1\n0\n");
  Dataset data = FiveDocuments();
  ASSERT_TRUE(ReadSideFiles(data_path, options, &data, nullptr).ok());
  EXPECT_EQ(data.marginal_positions, 2);
  EXPECT_THAT(data.marginals, ElementsAre(0.5, 0, 0.25, 0.5, 0, 0, 1, 0, 0, 0));

  Dataset rows = FiveDocuments();
  rows.input_line_order = {0, 2, 4, 1, 3};
  ASSERT_TRUE(
      AttachMarginals({{0.1}, {0.2, 0.3}, {0.4}, {0.5}, {0.6}}, "marginals",
                      &rows)
          .ok());
  EXPECT_EQ(rows.marginal_positions, 2);
  EXPECT_THAT(rows.marginals,
              ElementsAre(0.1f, 0, 0.4f, 0, 0.6f, 0, 0.2f, 0.3f, 0.5f, 0));
  Dataset bad = FiveDocuments();
  EXPECT_THAT(std::string(AttachMarginals({{0.1}}, "marginals", &bad).message()),
              HasSubstr("marginals: 1 rows, but the data has 5 documents"));
  EXPECT_THAT(std::string(AttachMarginals({{0}, {0}, {0, -1}, {0}, {0}},
                                          "marginals", &bad)
                              .message()),
              HasSubstr("marginals[2][1]: bad marginal -1"));
  EXPECT_THAT(std::string(AttachMarginals({{0}, {0.75, 0.5}, {0}, {0}, {0}},
                                          "marginals", &bad)
                              .message()),
              HasSubstr("marginals[1]: the marginals sum to 1.25"));
}

TEST(SideFilesTest, RegroupedQueriesTakeTheirLinesValues) {
  Dataset data = FiveDocuments();
  // Stored document i came from input line input_line_order[i].
  data.input_line_order = {0, 2, 4, 1, 3};
  ASSERT_TRUE(AttachSideValues({10, 11, 12, 13, 14}, "w", SideKind::kWeight,
                               true, &data)
                  .ok());
  EXPECT_THAT(data.weights, ElementsAre(10, 12, 14, 11, 13));
}

TEST(SideFilesTest, ArraysAreCheckedAsFilesAre) {
  Dataset data = FiveDocuments();
  EXPECT_THAT(std::string(AttachSideValues({1, 2}, "position",
                                           SideKind::kPosition, false, &data)
                              .message()),
              HasSubstr("position: 2 values, but the data has 5 documents"));
  EXPECT_THAT(std::string(AttachSideValues({1, 1, 1, 1, -2}, "sample_weight",
                                           SideKind::kWeight, false, &data)
                              .message()),
              HasSubstr("sample_weight[4]: bad weight"));
  EXPECT_FALSE(HasQueryMetricWeights(data));
}

}  // namespace
}  // namespace plrank
