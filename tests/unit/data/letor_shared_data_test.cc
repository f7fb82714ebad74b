// The reader on the real files under ../shared/data.

#include <cmath>
#include <set>
#include <string>

#include "core/data/letor_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;
using ::plrank::testing::SharedDataPath;

TEST(SharedDataTest, LightGbmExampleWithQueryFile) {
  PLRANK_REQUIRE_SHARED_DATA("lightgbm-example/rank.train");
  ReadStats stats;
  absl::StatusOr<Dataset> data =
      ReadLetorFile(SharedDataPath("lightgbm-example/rank.train"), {}, &stats);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->num_queries(), 201u);
  EXPECT_EQ(data->num_documents(), 3005u);
  EXPECT_EQ(data->num_features, 300);
  EXPECT_EQ(data->max_label(), 4);
  EXPECT_EQ(stats.lines, 3005);
  // First line: "0 10:0.89 11:0.75 ..." and feature 1 absent.
  EXPECT_EQ(data->labels[0], 0);
  EXPECT_EQ(data->value(0, 9), 0.89f);
  EXPECT_EQ(data->value(0, 0), 0.0f);

  absl::StatusOr<Dataset> test =
      ReadLetorFile(SharedDataPath("lightgbm-example/rank.test"), {});
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->num_queries(), 50u);
  EXPECT_EQ(test->num_documents(), 768u);
}

TEST(SharedDataTest, Mq2008PartLoads) {
  PLRANK_REQUIRE_SHARED_DATA("MQ2008/S1.txt");
  absl::StatusOr<Dataset> data =
      ReadLetorFile(SharedDataPath("MQ2008/S1.txt"), {});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->num_features, 46);
  EXPECT_EQ(data->max_label(), 2);
  EXPECT_GT(data->num_queries(), 100u);
  EXPECT_EQ(data->query_ids[0], "10002");
  // "0 qid:10002 1:0.007477 2:0.000000 3:1.000000 ..."
  EXPECT_EQ(data->value(0, 0), 0.007477f);
  EXPECT_EQ(data->value(0, 2), 1.0f);
  for (size_t q = 0; q < data->num_queries(); ++q) {
    EXPECT_LT(data->query_begin(q), data->query_end(q));
  }
  // Query ids are unique: the file keeps each query's lines together.
  std::set<std::string> ids(data->query_ids.begin(), data->query_ids.end());
  EXPECT_EQ(ids.size(), data->num_queries());
}

TEST(SharedDataTest, UnsortedDuplicateFeatureIds) {
  const std::string relative = "edge-cases/unsorted-duplicate-feature-ids.txt";
  PLRANK_REQUIRE_SHARED_DATA(relative);
  absl::StatusOr<Dataset> refused =
      ReadLetorFile(SharedDataPath(relative), {});
  ASSERT_FALSE(refused.ok());
  // Line 1 repeats feature 17.
  EXPECT_THAT(refused.status().message(),
              HasSubstr("unsorted-duplicate-feature-ids.txt:1: feature 17 "
                        "repeated"));

  ReadOptions options;
  options.duplicates = DuplicateFeaturePolicy::kLastWins;
  ReadStats stats;
  absl::StatusOr<Dataset> data =
      ReadLetorFile(SharedDataPath(relative), options, &stats);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_GT(stats.duplicate_features, 0);
  // "0 qid:1 ... 17:-0.763873 17:0.369905 ...": the last value wins.
  EXPECT_EQ(data->value(0, 16), 0.369905f);
  EXPECT_EQ(data->value(0, 114), -0.617277f);
}

TEST(SharedDataTest, TrecNewsSmall) {
  PLRANK_REQUIRE_SHARED_DATA("edge-cases/trec-news-2018-small.train");
  absl::StatusOr<Dataset> data = ReadLetorFile(
      SharedDataPath("edge-cases/trec-news-2018-small.train"), {});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->num_queries(), 45u);
  EXPECT_EQ(data->num_features, 5);
  EXPECT_EQ(data->max_label(), 4);
  // "1 qid:321 1:-1 3:-1 4:4.467956841272084e-08 ...": feature 2 absent.
  EXPECT_EQ(data->value(1, 1), 0.0f);
  EXPECT_EQ(data->value(1, 3), 4.467956841272084e-08f);
}

}  // namespace
}  // namespace plrank
