// The paper-reproduction harness (bench/repro_lib.h) in a tiny setting: one
// MQ2008 fold, 3 trees x 4 leaves, a few systems, Table 3 for obj = 3, 6.
// The harness runs in-process; plrank-train / plrank-eval are the real CLIs.
// Built only with the benchmarks (PLRANK_BUILD_BENCH), which link
// plrank_repro_lib into this test and define PLRANK_HAVE_REPRO_LIB.
#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#if defined(PLRANK_HAVE_REPRO_LIB)
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/repro_lib.h"
#include "bench/repro_report.h"
#include "bench/repro_sweep.h"
#include "bench/repro_systems.h"
#include "nlohmann/json.hpp"
#include "tests/testing/shared_data.h"
#include "tests/testing/subprocess.h"

namespace plrank::bench {
namespace {

using ::testing::HasSubstr;

// The part of `report` from the line starting with `title` to the next
// "Table " heading.
std::string Section(const std::string& report, const std::string& title) {
  const size_t start = report.find(title);
  if (start == std::string::npos) return "";
  const size_t end = report.find("\nTable ", start + 1);
  return report.substr(
      start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(ReproSystems, ParsesListsAndRejectsBadOnes) {
  absl::StatusOr<std::vector<ReproSystem>> all = ParseReproSystems("all");
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 14u);
  EXPECT_EQ((*all)[0].label, "PLRank(obj=1)");
  EXPECT_EQ((*all)[1].permutations, 3);
  // "plrank" alone is PLRank with the trainer's defaults, not the paper's.
  EXPECT_EQ((*all)[2].key, "plrank");
  EXPECT_EQ((*all)[2].label, "PLRank(default)");
  EXPECT_EQ((*all)[2].permutations, 0);
  absl::StatusOr<std::vector<ReproSystem>> some =
      ParseReproSystems("plrank6, McRank,ca");
  ASSERT_TRUE(some.ok()) << some.status();
  EXPECT_EQ((*some)[0].key, "plrank6");
  EXPECT_TRUE((*some)[1].scaled_trees);
  EXPECT_TRUE((*some)[2].linear);
  EXPECT_FALSE(ParseReproSystems("mart3").ok());
  EXPECT_FALSE(ParseReproSystems("plrank0").ok());
  EXPECT_FALSE(ParseReproSystems("mart2,mart2").ok());
  EXPECT_FALSE(ParseReproSystems("").ok());
}

TEST(ReproParsing, ReadsTheContextsLine) {
  absl::StatusOr<CompressionRow> row = ParseContextsLine(
      "plrank: top-k 10, ...\ncontexts: 867 distinct of 1000 (ratio 0.867, "
      "equivalent objectives 2.60)\nwrote m.pb\n");
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->distinct, 867);
  EXPECT_EQ(row->total, 1000);
  EXPECT_DOUBLE_EQ(row->ratio, 0.867);
  EXPECT_FALSE(ParseContextsLine("no such line").ok());
  EXPECT_FALSE(ParsePositiveIntList("3,x").ok());
  EXPECT_EQ(*ParsePositiveIntList("3,6"), (std::vector<int>{3, 6}));
}

TEST(ReproHarness, TinySettingPrintsTheThreeTablesAndValidJson) {
  PLRANK_REQUIRE_SHARED_DATA("MQ2008/S1.txt");
  ::plrank::testing::TempDir dir;
  const auto folds = ::plrank::testing::RunCommand(
      {"/bin/bash", ::plrank::testing::SharedDataPath("make-folds.sh"),
       dir.path()});
  ASSERT_EQ(folds.exit_code, 0) << folds.err;

  ReproConfig config;
  config.folds_dir = dir.path();
  config.bin_dir = PLRANK_BIN_DIR;
  config.work_dir = dir.path();
  absl::StatusOr<std::vector<ReproSystem>> systems = ParseReproSystems(
      "plrank1,plrank3,lambdamart,mcrank,mart2,cklmart,listmle,plrank");
  ASSERT_TRUE(systems.ok()) << systems.status();
  config.systems = *systems;
  config.trees = 3;
  config.leaves = 4;
  config.max_folds = 1;
  config.obj_list = {3, 6};
  std::vector<std::string> progress;
  config.progress = [&progress](std::string_view line) {
    progress.emplace_back(line);
  };

  absl::StatusOr<ReproResults> results = RunRepro(config);
  ASSERT_TRUE(results.ok()) << results.status();
  const std::string report = FormatReproReport(*results);
  EXPECT_TRUE(results->ok()) << report;
  EXPECT_EQ(results->fold_names, std::vector<std::string>{"Fold1"});
  EXPECT_GT(results->num_test_queries, 100);

  const std::string table1 = Section(report, "Table 1");
  const std::string table3 = Section(report, "Table 3");
  const std::string table4 = Section(report, "Table 4");
  ASSERT_FALSE(table1.empty()) << report;
  ASSERT_FALSE(table3.empty()) << report;
  ASSERT_FALSE(table4.empty()) << report;
  EXPECT_THAT(table1,
              HasSubstr("| system | NDCG@1 | NDCG@3 | NDCG@10 | ERR |"));
  EXPECT_THAT(table1, HasSubstr("PLRank(obj=1) (reference)"));
  for (const ReproSystem& system : config.systems) {
    const std::string mark = system.key == "plrank1" ? " (reference)" : "";
    EXPECT_THAT(table1, HasSubstr("| " + system.label + mark + " | 0."))
        << system.key;
    EXPECT_THAT(table4, HasSubstr("| " + system.label + " |")) << system.key;
    const std::string line = "[fold 1/1] " + system.key + ": train ";
    EXPECT_TRUE(std::any_of(progress.begin(), progress.end(),
                            [&](const std::string& p) {
                              return absl::StartsWith(p, line) &&
                                     absl::StrContains(p, "test NDCG@10 0.");
                            }))
        << system.key;
  }
  EXPECT_THAT(table3, HasSubstr("\n| 3 | 0."));
  EXPECT_THAT(table3, HasSubstr("\n| 6 | 0."));
  EXPECT_THAT(table4, HasSubstr("| McRank | 8 |"));  // round(3 x 2.5)
  EXPECT_THAT(table4, HasSubstr("| MART-2 | 3 |"));
  // MART-2 against itself (train_seconds has 3 decimals: 3 tiny trees may
  // print 0.000, and then there is no ratio).
  const bool mart_timed = results->systems[4].train_seconds > 0;
  if (mart_timed) {
    EXPECT_THAT(table4, HasSubstr("| 1.00 |"));
  }

  const std::string json_text = ReproJson(*results);
  const nlohmann::json json = nlohmann::json::parse(json_text, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << json_text;
  for (const char* key :
       {"config", "folds", "num_test_queries", "num_empty_test_queries",
        "reference", "time_baseline", "table1", "table3", "table4"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json["reference"], "plrank1");
  EXPECT_EQ(json["time_baseline"], "mart2");
  ASSERT_EQ(json["table1"].size(), config.systems.size());
  ASSERT_EQ(json["table4"].size(), config.systems.size());
  ASSERT_EQ(json["table3"].size(), 4u);  // obj 3 and 6, two truncations each
  for (const nlohmann::json& row : json["table1"]) {
    EXPECT_FALSE(row["failed"].get<bool>()) << row.dump();
    for (const char* metric : {"ndcg@1", "ndcg@3", "ndcg@10", "err"}) {
      const double value = row["means"][metric].get<double>();
      EXPECT_GT(value, 0.0) << row.dump();
      EXPECT_LE(value, 1.0) << row.dump();
    }
    if (row["system"] == "plrank1") {
      EXPECT_TRUE(row["p_values"]["ndcg@10"].is_null());
    } else {
      EXPECT_TRUE(row["p_values"]["ndcg@10"].is_number()) << row.dump();
    }
  }
  for (const nlohmann::json& row : json["table3"]) {
    const int m = row["m"].get<int>();
    const double ratio = row["ratio"].get<double>();
    EXPECT_GT(ratio, 0.0);
    EXPECT_LE(ratio, 1.0);  // duplicates are stored once, never added
    EXPECT_NEAR(row["equivalent_objectives"].get<double>(), ratio * m, 1e-9);
    EXPECT_LE(row["distinct"].get<int64_t>(), row["total"].get<int64_t>());
  }
  for (const nlohmann::json& row : json["table4"]) {
    EXPECT_GE(row["train_seconds"].get<double>(), 0.0) << row.dump();
  }

  const std::string csv = ReproCsv(*results);
  EXPECT_TRUE(absl::StartsWith(csv, "table,row,column,value\n"));
  EXPECT_THAT(csv, HasSubstr("table1,lambdamart,ndcg@10,0."));
  EXPECT_THAT(csv, HasSubstr("table3,obj6_plain,ratio,"));
  if (mart_timed) {
    EXPECT_THAT(csv, HasSubstr("table4,mart2,ratio_to_mart,1\n"));
  }
}

// The paper's Fig. 2 sweep on two tiny feature counts of one fold: every
// system has a point per count, the scratch data really holds only the first
// N features, and the JSON is what plrank-plot fig2 reads.
TEST(ReproHarness, FeatureSweepTrainsLinearRankersOnTheFirstNFeatures) {
  PLRANK_REQUIRE_SHARED_DATA("MQ2008/S1.txt");
  ::plrank::testing::TempDir dir;
  const auto folds = ::plrank::testing::RunCommand(
      {"/bin/bash", ::plrank::testing::SharedDataPath("make-folds.sh"),
       dir.path()});
  ASSERT_EQ(folds.exit_code, 0) << folds.err;
  ReproConfig config;
  config.folds_dir = dir.path();
  config.bin_dir = PLRANK_BIN_DIR;
  config.work_dir = dir.path();
  config.keep_work_dir = true;
  config.max_folds = 1;
  absl::StatusOr<std::vector<ReproSystem>> systems =
      ParseReproSystems("listmle,ca");
  ASSERT_TRUE(systems.ok()) << systems.status();
  config.systems = *systems;
  std::vector<std::string> progress;
  config.progress = [&progress](std::string_view line) {
    progress.emplace_back(line);
  };

  absl::StatusOr<SweepResults> results = RunFeatureSweep(config, {2, 5});
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_TRUE(results->ok()) << absl::StrJoin(progress, "\n");
  EXPECT_EQ(results->data_features, 46);
  ASSERT_EQ(results->series.size(), 2u);
  for (const SweepSeries& line : results->series) {
    ASSERT_EQ(line.points.size(), 2u);
    for (const SweepPoint& point : line.points) {
      EXPECT_GT(point.ndcg10, 0.0) << line.system.key;
      EXPECT_LE(point.ndcg10, 1.0) << line.system.key;
      EXPECT_EQ(point.fold_ndcg10.size(), 1u);
    }
    EXPECT_EQ(line.points[0].features, 2);
    EXPECT_EQ(line.points[1].features, 5);
  }
  // The first line of the 2-feature training data has features 1 and 2 only.
  std::string scratch;
  for (const std::string& line : progress) {
    if (absl::StartsWith(line, "scratch files in ")) scratch = line.substr(17);
  }
  ASSERT_FALSE(scratch.empty());
  const std::string two = ::plrank::testing::ReadWholeFile(
      scratch + "/Fold1.f2.train");
  const std::string first = two.substr(0, two.find('\n'));
  EXPECT_THAT(first, HasSubstr(" 2:"));
  EXPECT_THAT(first, ::testing::Not(HasSubstr(" 3:"))) << first;

  const nlohmann::json json =
      nlohmann::json::parse(SweepJson(*results), nullptr, false);
  ASSERT_FALSE(json.is_discarded());
  EXPECT_EQ(json["metric"], "ndcg@10");
  EXPECT_EQ(json["feature_counts"], nlohmann::json({2, 5}));
  ASSERT_EQ(json["series"].size(), 2u);
  EXPECT_EQ(json["series"][0]["system"], "listmle");
  EXPECT_EQ(json["series"][1]["label"], "CA");
  EXPECT_EQ(json["series"][1]["points"][1]["features"], 5);
  EXPECT_TRUE(json["series"][1]["points"][1]["ndcg@10"].is_number());
  EXPECT_THAT(FormatSweepReport(*results),
              HasSubstr("| features | l-ListMLE | CA |"));

  // A count above the data's features is refused before any training.
  absl::StatusOr<SweepResults> too_many = RunFeatureSweep(config, {47});
  EXPECT_FALSE(too_many.ok());
  EXPECT_THAT(std::string(too_many.status().message()),
              HasSubstr("not in 1..46"));
}

}  // namespace
}  // namespace plrank::bench

#else  // !PLRANK_HAVE_REPRO_LIB

TEST(ReproHarness, NeedsTheBenchmarks) {
  GTEST_SKIP() << "plrank_repro_lib is built only with PLRANK_BUILD_BENCH=ON";
}

#endif
