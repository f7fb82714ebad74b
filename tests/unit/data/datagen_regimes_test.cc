// The generator's regime presets produce the statistics they promise
// (core/data/datagen_regimes.h), deterministically, and bad options are
// refused with a message.
#include "core/data/datagen_regimes.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/data/datagen.h"
#include "core/data/dataset_stats.h"
#include "core/data/letor_writer.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

DatasetStats StatsOf(const std::string& regime, int32_t queries = 600,
                     uint64_t seed = 1) {
  absl::StatusOr<DatagenOptions> options = DatagenRegime(regime);
  EXPECT_TRUE(options.ok()) << options.status();
  options->num_queries = queries;
  options->seed = seed;
  EXPECT_TRUE(ValidateDatagenOptions(*options).ok());
  return ComputeDatasetStats(GenerateDataset(*options));
}

void ExpectShares(const DatasetStats& stats, const std::vector<double>& want) {
  ASSERT_EQ(stats.label_shares.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    // Cut at global quantiles: exact up to ties at a cut point.
    EXPECT_NEAR(stats.label_shares[k], want[k], 0.005) << "label " << k;
  }
}

TEST(DatagenRegimes, MslrIsTheDefault) {
  absl::StatusOr<DatagenOptions> mslr = DatagenRegime("mslr");
  ASSERT_TRUE(mslr.ok());
  std::string a, b;
  DatagenOptions defaults;
  defaults.num_queries = mslr->num_queries = 20;
  ASSERT_TRUE(AppendLetorText(GenerateDataset(defaults), &a).ok());
  ASSERT_TRUE(AppendLetorText(GenerateDataset(*mslr), &b).ok());
  EXPECT_EQ(a, b);
  const DatasetStats stats = StatsOf("mslr");
  EXPECT_NEAR(stats.docs_per_query_mean, 120, 10);
  ExpectShares(stats, {0.51, 0.32, 0.13, 0.025, 0.015});
  EXPECT_GT(stats.queries_without_relevant, 0.005);
  EXPECT_LT(stats.queries_without_relevant, 0.08);
  EXPECT_EQ(stats.duplicate_vector_share, 0);
}

TEST(DatagenRegimes, ManyRelevantIsOhsumedLike) {
  const DatasetStats stats = StatsOf("many_relevant");
  EXPECT_NEAR(stats.docs_per_query_mean, 150, 8);
  // Small spread: the median is close to the mean.
  EXPECT_NEAR(stats.docs_per_query_median, stats.docs_per_query_mean, 12);
  ExpectShares(stats, {0.64, 0.20, 0.16});
  EXPECT_GE(stats.relevant_share, 0.30);
  EXPECT_LE(stats.relevant_share, 0.40);
  EXPECT_GT(stats.relevant_per_query_median, 30);
  EXPECT_LT(stats.queries_with_at_most_two_relevant, 0.02);
}

TEST(DatagenRegimes, SparseLeavesMostQueriesWithZeroToTwoRelevant) {
  const DatasetStats stats = StatsOf("sparse");
  EXPECT_NEAR(stats.docs_per_query_mean, 60, 5);
  ExpectShares(stats, {0.97, 0.02, 0.01});
  EXPECT_GT(stats.queries_with_at_most_two_relevant, 0.7);
  // Concentrated: far more empty queries than spreading 3% evenly would
  // leave (about e^-1.8 = 17%), but not so many that nothing is measured.
  EXPECT_GT(stats.queries_without_relevant, 0.3);
  EXPECT_LT(stats.queries_without_relevant, 0.55);
  EXPECT_LE(stats.relevant_per_query_median, 2);
}

TEST(DatagenRegimes, GradedTiesHasFiveGradesAndHeavyTies) {
  const DatasetStats stats = StatsOf("graded_ties");
  EXPECT_NEAR(stats.docs_per_query_mean, 40, 4);
  ExpectShares(stats, {0.35, 0.25, 0.20, 0.12, 0.08});
  EXPECT_GT(stats.duplicate_vector_share, 0.8);
}

TEST(DatagenRegimes, LongBinaryHasLongListsWithFewRelevantEach) {
  const DatasetStats stats = StatsOf("long_binary", 150);
  EXPECT_NEAR(stats.docs_per_query_mean, 700, 40);
  // Pools of nearly fixed depth.
  EXPECT_NEAR(stats.docs_per_query_median, stats.docs_per_query_mean, 50);
  ExpectShares(stats, {0.985, 0.015});
  // Relevant documents spread over the queries: hardly any query without.
  EXPECT_LT(stats.queries_without_relevant, 0.02);
  EXPECT_GE(stats.relevant_per_query_median, 5);
  EXPECT_LE(stats.relevant_per_query_median, 10);
}

TEST(DatagenRegimes, ShortGradedHasShortMostlyRelevantLists) {
  const DatasetStats stats = StatsOf("short_graded");
  EXPECT_NEAR(stats.docs_per_query_mean, 24, 2);
  ExpectShares(stats, {0.26, 0.36, 0.28, 0.08, 0.02});
  EXPECT_EQ(stats.queries_without_relevant, 0);
  EXPECT_LT(stats.queries_with_at_most_two_relevant, 0.03);
}

TEST(DatagenRegimes, DeepGradedHasDeepListsOfMostlyIrrelevant) {
  const DatasetStats stats = StatsOf("deep_graded", 300);
  EXPECT_NEAR(stats.docs_per_query_mean, 300, 25);
  ExpectShares(stats, {0.89, 0.05, 0.04, 0.015, 0.005});
  EXPECT_GT(stats.relevant_per_query_median, 10);
  EXPECT_GT(stats.queries_without_relevant, 0.02);
  EXPECT_LT(stats.queries_without_relevant, 0.1);
}

TEST(DatagenRegimes, ShortBinaryIsClickLike) {
  const DatasetStats stats = StatsOf("short_binary", 2000);
  EXPECT_NEAR(stats.docs_per_query_mean, 10, 1);
  ExpectShares(stats, {0.85, 0.15});
  EXPECT_LE(stats.relevant_per_query_median, 2);
  EXPECT_GT(stats.queries_without_relevant, 0.25);
  EXPECT_LT(stats.queries_without_relevant, 0.45);
}

TEST(DatagenRegimes, SmallIsAFewThousandGradedDocuments) {
  const DatasetStats stats = StatsOf("small", 100);
  EXPECT_NEAR(stats.docs_per_query_mean, 25, 4);
  EXPECT_LE(stats.num_documents, 3200);
  ExpectShares(stats, {0.45, 0.30, 0.15, 0.07, 0.03});
}

TEST(DatagenRegimes, StatisticsHoldForOtherSeeds) {
  for (uint64_t seed : {2, 3}) {
    EXPECT_NEAR(StatsOf("sparse", 600, seed).relevant_share, 0.03, 0.005);
    EXPECT_GT(StatsOf("graded_ties", 300, seed).duplicate_vector_share, 0.8);
  }
}

TEST(DatagenRegimes, EveryRegimeIsDeterministic) {
  for (const std::string& regime : DatagenRegimeNames()) {
    absl::StatusOr<DatagenOptions> options = DatagenRegime(regime);
    ASSERT_TRUE(options.ok()) << regime;
    options->num_queries = 25;
    std::string first, second, other;
    ASSERT_TRUE(AppendLetorText(GenerateDataset(*options), &first).ok());
    ASSERT_TRUE(AppendLetorText(GenerateDataset(*options), &second).ok());
    options->seed = 2;
    ASSERT_TRUE(AppendLetorText(GenerateDataset(*options), &other).ok());
    EXPECT_EQ(first, second) << regime;
    EXPECT_NE(first, other) << regime;
  }
}

TEST(DatagenRegimes, UnknownRegimeNamesTheKnownOnes) {
  absl::StatusOr<DatagenOptions> options = DatagenRegime("ohsumed");
  ASSERT_FALSE(options.ok());
  EXPECT_TRUE(absl::StrContains(options.status().message(), "graded_ties"));
}

TEST(DatagenRegimes, TieLevelsBoundDistinctVectorsPerQuery) {
  DatagenOptions options;
  options.num_queries = 50;
  options.mean_docs_per_query = 30;
  options.tie_levels = 1;
  const Dataset data = GenerateDataset(options);
  // One prototype per query: every document of a query is the same vector.
  for (size_t q = 0; q < data.num_queries(); ++q) {
    for (size_t i = data.query_begin(q) + 1; i < data.query_end(q); ++i) {
      for (int32_t f = 0; f < data.num_features; ++f) {
        const float a = data.value(data.query_begin(q), f);
        const float b = data.value(i, f);
        ASSERT_TRUE(a == b || (std::isnan(a) && std::isnan(b)));
      }
    }
  }
}

TEST(LabelShares, ParsesAndValidates) {
  absl::StatusOr<std::vector<double>> shares = ParseLabelShares("0.5, 0.3,0.2");
  ASSERT_TRUE(shares.ok()) << shares.status();
  EXPECT_EQ(*shares, (std::vector<double>{0.5, 0.3, 0.2}));
  // Within 1e-6 of 1 is accepted; beyond is not.
  EXPECT_TRUE(ParseLabelShares("0.5,0.5000005").ok());
  for (const char* bad : {"0.5,0.4", "0.6,0.6", "1", "", "0.5,abc",
                          "1.5,-0.5", "0.5,nan,0.5", "0.5,,0.5"}) {
    absl::StatusOr<std::vector<double>> parsed = ParseLabelShares(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_TRUE(absl::StrContains(parsed.status().message(), "label shares"))
        << parsed.status();
  }
  EXPECT_FALSE(ValidateLabelShares(std::vector<double>(33, 1.0 / 33)).ok());
  EXPECT_TRUE(ValidateLabelShares(std::vector<double>(32, 1.0 / 32)).ok());
}

TEST(LabelShares, ValidateDatagenOptionsRefusesBadRegimeOptions) {
  const auto refused = [](auto change) {
    DatagenOptions options;
    options.num_queries = 10;
    change(options);
    return !ValidateDatagenOptions(options).ok() &&
           GenerateDataset(options).num_documents() == 0;
  };
  EXPECT_TRUE(refused([](DatagenOptions& o) { o.label_shares = {0.9, 0.2}; }));
  EXPECT_TRUE(refused([](DatagenOptions& o) { o.label_shares = {1.0}; }));
  EXPECT_TRUE(refused([](DatagenOptions& o) { o.docs_sigma = -0.1; }));
  EXPECT_TRUE(refused([](DatagenOptions& o) { o.docs_sigma = 4; }));
  EXPECT_TRUE(refused([](DatagenOptions& o) { o.hopeless_share = 1.5; }));
  EXPECT_TRUE(refused([](DatagenOptions& o) { o.query_offset_share = 1; }));
  EXPECT_TRUE(refused([](DatagenOptions& o) { o.tie_levels = -1; }));
}

TEST(LabelShares, GradesFollowTheShares) {
  DatagenOptions options;
  options.num_queries = 200;
  options.mean_docs_per_query = 30;
  options.label_shares = {0.2, 0.2, 0.2, 0.2, 0.1, 0.1};
  const DatasetStats stats = ComputeDatasetStats(GenerateDataset(options));
  ExpectShares(stats, options.label_shares);
}

}  // namespace
}  // namespace plrank
