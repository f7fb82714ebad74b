// plrank-bench-quality (bench/quality_*.h): its list parsing in-process, and
// the real program at a tiny setting — one MQ2008 fold and one small
// generated regime, 3 trees — whose report must hold every system with sane
// numbers. Built with the benchmarks only (PLRANK_HAVE_QUALITY_LIB); the
// XGBoost rows are expected exactly when plrank-xgb-peer is built
// (PLRANK_HAVE_XGB_PEER).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#if defined(PLRANK_HAVE_QUALITY_LIB)
#include "bench/quality_systems.h"
#include "nlohmann/json.hpp"
#include "tests/testing/shared_data.h"
#include "tests/testing/subprocess.h"

namespace plrank::bench {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

#if defined(PLRANK_HAVE_XGB_PEER)
constexpr bool kHaveXgboost = true;
#else
constexpr bool kHaveXgboost = false;
#endif

TEST(QualitySystems, ParsesVariantsWithEqualsInNames) {
  absl::StatusOr<std::vector<QualitySystem>> variants = ParsePlrankVariants(
      "PLRank (default)=; K=all=--pl_topk=100000 --pl_permutations=3;paper=-x");
  ASSERT_TRUE(variants.ok()) << variants.status();
  ASSERT_EQ(variants->size(), 3u);
  EXPECT_EQ((*variants)[0].name, "PLRank (default)");
  EXPECT_TRUE((*variants)[0].extra_flags.empty());
  EXPECT_EQ((*variants)[1].name, "K=all");
  EXPECT_THAT((*variants)[1].extra_flags,
              ElementsAre("--pl_topk=100000", "--pl_permutations=3"));
  EXPECT_EQ((*variants)[2].objective, "plrank");
  EXPECT_TRUE((*variants)[2].plrank_variant);
  for (const char* bad : {"", ";", "noflags", "=--pl_topk=3", "a=;a="}) {
    EXPECT_FALSE(ParsePlrankVariants(bad).ok()) << bad;
  }
}

TEST(QualitySystems, ParsesPeers) {
  absl::StatusOr<std::vector<QualitySystem>> peers =
      ParsePeerSystems("lambdamart, xgb_ndcg,xgb_pairwise");
  ASSERT_TRUE(peers.ok()) << peers.status();
  ASSERT_EQ(peers->size(), 3u);
  EXPECT_EQ((*peers)[0].name, "LambdaMART");
  EXPECT_EQ((*peers)[0].objective, "lambdamart");
  EXPECT_FALSE((*peers)[0].xgboost);
  EXPECT_EQ((*peers)[1].name, "XGBoost rank:ndcg");
  EXPECT_TRUE((*peers)[2].xgboost);
  EXPECT_EQ((*peers)[2].objective, "rank:pairwise");
  absl::StatusOr<std::vector<QualitySystem>> own =
      ParsePeerSystems("xgb_pairwise_defaults,xgb_ndcg_defaults");
  ASSERT_TRUE(own.ok()) << own.status();
  ASSERT_EQ(own->size(), 2u);
  EXPECT_TRUE((*own)[0].xgboost);
  EXPECT_EQ((*own)[0].objective, "rank:pairwise");
  EXPECT_EQ((*own)[0].name, "XGBoost rank:pairwise (own defaults)");
  EXPECT_EQ((*own)[1].objective, "rank:ndcg");
  EXPECT_THAT((*own)[1].extra_flags,
              ElementsAre(HasSubstr("grow_policy=depthwise,max_depth=6")));
  EXPECT_TRUE(ParsePeerSystems("").ok());
  EXPECT_FALSE(ParsePeerSystems("xgb_map").ok());
  EXPECT_FALSE(ParsePeerSystems("lambdamart,lambdamart").ok());
}

std::vector<std::string> TinyCommand(const TempDir& dir, const std::string& sets,
                                     const std::string& variants) {
  return {BinPath("plrank-bench-quality"), "--sets=" + sets,
          "--mq2008_folds=1", "--seeds=1", "--gen_queries=60", "--trees=3",
          "--leaves=4", "--plrank_variants=" + variants,
          "--shared_data=" + ::plrank::testing::SharedDataPath(""),
          "--bin_dir=" + std::string(PLRANK_BIN_DIR), "--work_dir=" + dir.path(),
          "--out=" + dir.File("quality.md")};
}

TEST(QualityBench, TinyRunReportsEverySystemWithSaneNumbers) {
  PLRANK_REQUIRE_SHARED_DATA("MQ2008/S1.txt");
  TempDir dir;
  const CommandResult run = RunCommand(
      TinyCommand(dir, "mq2008,sparse", "PLRank (default)=;K=all=--pl_topk=100000"));
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const std::string md = ReadWholeFile(dir.File("quality.md"));
  EXPECT_EQ(md, run.out);
  EXPECT_THAT(md, HasSubstr("- command: `"));
  EXPECT_THAT(md, HasSubstr("- commit: "));
  EXPECT_THAT(md, HasSubstr("## Summary: NDCG@10 per set"));
  EXPECT_THAT(md, HasSubstr("| mq2008 | 0."));
  EXPECT_THAT(md, HasSubstr("| sparse | 0."));
  EXPECT_THAT(md, HasSubstr("### sparse: generated, regime sparse"));
  EXPECT_THAT(md, HasSubstr("relevant per query mean"));  // datagen's stats

  std::vector<std::string> expected = {"PLRank (default)", "K=all", "LambdaMART"};
  if (kHaveXgboost) {
    expected.push_back("XGBoost rank:ndcg");
    expected.push_back("XGBoost rank:pairwise");
  } else {
    EXPECT_THAT(md, HasSubstr("XGBoost rank:ndcg skipped"));
  }
  const nlohmann::json json =
      nlohmann::json::parse(ReadWholeFile(dir.File("quality.json")));
  EXPECT_EQ(json["candidate"], "PLRank (default)");
  ASSERT_EQ(json["systems"].size(), expected.size());
  ASSERT_EQ(json["sets"].size(), 2u);
  for (const nlohmann::json& set : json["sets"]) {
    SCOPED_TRACE(set["name"].get<std::string>());
    EXPECT_EQ(set["error"], "");
    EXPECT_GT(set["test_queries"].get<int>(), 5);
    EXPECT_FALSE(set["best_peer"].is_null());
    EXPECT_TRUE(set["candidate_ge_best_peer"].is_boolean());
    ASSERT_EQ(set["systems"].size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      const nlohmann::json& row = set["systems"][i];
      EXPECT_EQ(row["name"], expected[i]);
      EXPECT_FALSE(row["failed"].get<bool>()) << row["error"];
      for (const char* metric : {"ndcg@1", "ndcg@3", "ndcg@10"}) {
        const double value = row[metric].get<double>();
        EXPECT_GT(value, 0) << expected[i] << " " << metric;
        EXPECT_LE(value, 1) << expected[i] << " " << metric;
      }
      EXPECT_GE(row["err"].get<double>(), 0);
      EXPECT_LE(row["err"].get<double>(), 1);
      EXPECT_GE(row["train_seconds"].get<double>(), 0);
      if (i == 0) {
        EXPECT_TRUE(row["p_value"].is_null());
      } else {
        EXPECT_GE(row["p_value"].get<double>(), 0);
        EXPECT_LE(row["p_value"].get<double>(), 1);
      }
      EXPECT_THAT(md, HasSubstr(i == 0 ? "| **" + expected[i] + "** (candidate) | 0."
                                       : "| " + expected[i] + " | 0."));
    }
  }
}

TEST(QualityBench, AFailingVariantIsReportedAndTheOthersStillRun) {
  TempDir dir;
  std::vector<std::string> command =
      TinyCommand(dir, "sparse", "ok=;broken=--no_such_flag=1");
  command.push_back("--systems=lambdamart");
  command.push_back("--candidate=broken");
  const CommandResult run = RunCommand(command);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const std::string md = ReadWholeFile(dir.File("quality.md"));
  EXPECT_THAT(md, HasSubstr("| broken | failed: "));
  EXPECT_THAT(md, HasSubstr("| ok | 0."));
  EXPECT_THAT(md, HasSubstr("| LambdaMART | 0."));
  EXPECT_THAT(md, HasSubstr("| n/a | n/a |"));  // no candidate, no verdict
}

TEST(QualityBench, FirstSeedPicksOtherGeneratedData) {
  TempDir dir;
  std::vector<std::string> command = TinyCommand(dir, "sparse", "a=");
  command.push_back("--systems=lambdamart");
  command.push_back("--first_seed=11");
  command.push_back("--seeds=2");
  const CommandResult run = RunCommand(command);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string md = ReadWholeFile(dir.File("quality.md"));
  EXPECT_THAT(md, HasSubstr("seeds 11..12)"));
  EXPECT_THAT(md, HasSubstr("- seed 11, whole set: "));
  EXPECT_THAT(md, HasSubstr("- seed 12, whole set: "));
  EXPECT_THAT(md, Not(HasSubstr("- seed 1, whole set: ")));
  const nlohmann::json json =
      nlohmann::json::parse(ReadWholeFile(dir.File("quality.json")));
  EXPECT_EQ(json["settings"]["first_seed"], 11);
}

TEST(QualityBench, GenFlagsReachTheGenerator) {
  TempDir dir;
  std::vector<std::string> command = TinyCommand(dir, "sparse", "a=");
  command.push_back("--systems=");
  // sparse's own preset is ~60 documents per query; the benchmark's own
  // --seed must win over one given here.
  command.push_back("--gen_flags=--mean_docs=12  --docs_sigma=0.01 --seed=99");
  command.push_back("--keep_work_dir");
  const CommandResult run = RunCommand(command);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string md = ReadWholeFile(dir.File("quality.md"));
  EXPECT_THAT(md, HasSubstr("regime sparse, plrank-datagen --mean_docs=12 "
                            "--docs_sigma=0.01 --seed=99 ("));
  EXPECT_THAT(md, HasSubstr("- seed 1, whole set: 60 queries, "));
  EXPECT_THAT(md, HasSubstr("docs/query mean 12"));
  const nlohmann::json json =
      nlohmann::json::parse(ReadWholeFile(dir.File("quality.json")));
  EXPECT_THAT(json["settings"]["gen_flags"].get<std::vector<std::string>>(),
              ElementsAre("--mean_docs=12", "--docs_sigma=0.01", "--seed=99"));

  // The kept training file is seed 1's, byte for byte.
  std::string kept_train;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(dir.path())) {
    if (entry.path().filename() == "sparse.1.train")
      kept_train = entry.path().string();
  }
  ASSERT_FALSE(kept_train.empty())
      << "no sparse.1.train kept under " << dir.path();
  const CommandResult direct =
      RunCommand({BinPath("plrank-datagen"), "--regime=sparse",
                  "--mean_docs=12", "--docs_sigma=0.01", "--queries=60",
                  "--seed=1", "--out_prefix=" + dir.File("direct")});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_EQ(ReadWholeFile(kept_train), ReadWholeFile(dir.File("direct.train")));

  std::vector<std::string> bad = TinyCommand(dir, "sparse", "a=");
  bad.push_back("--gen_flags=--no_such_datagen_flag=1");
  const CommandResult refused = RunCommand(bad);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.out + refused.err, HasSubstr("no_such_datagen_flag"));
}

// --plrank_auto_learning_rate: the PLRank variants get no --learning_rate
// (so on these small sets plrank-train's auto rate is 0.1, whatever the
// benchmark's), the peers keep the benchmark's.
TEST(QualityBench, PlrankAutoLearningRateLeavesTheRateToPlrankTrain) {
  TempDir dir;
  auto run = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> command =
        TinyCommand(dir, "sparse", "PLRank (default)=");
    command.push_back("--systems=lambdamart");
    command.push_back("--out=" + dir.File(name + ".md"));
    command.insert(command.end(), extra.begin(), extra.end());
    const CommandResult result = RunCommand(command);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const nlohmann::json json =
        nlohmann::json::parse(ReadWholeFile(dir.File(name + ".json")));
    const nlohmann::json& systems = json["sets"][0]["systems"];
    return std::make_pair(systems[0]["ndcg@10"].get<double>(),
                          systems[1]["ndcg@10"].get<double>());
  };
  const auto [plrank_at_01, lambdamart_at_01] =
      run("fixed01", {"--learning_rate=0.1"});
  const auto [plrank_at_03, lambdamart_at_03] =
      run("fixed03", {"--learning_rate=0.3"});
  const auto [plrank_auto, lambdamart_auto] =
      run("auto", {"--learning_rate=0.3", "--plrank_auto_learning_rate"});
  EXPECT_NE(plrank_at_01, plrank_at_03);  // the rate matters on this set
  EXPECT_EQ(plrank_auto, plrank_at_01);
  EXPECT_EQ(lambdamart_auto, lambdamart_at_03);
  EXPECT_THAT(ReadWholeFile(dir.File("auto.md")),
              HasSubstr("the PLRank variants got no --learning_rate"));
  EXPECT_EQ(nlohmann::json::parse(ReadWholeFile(dir.File(
                "auto.json")))["settings"]["plrank_auto_learning_rate"],
            true);
}

// --xgb_params reaches XGBoost, after the flags' own parameters: at eta 0
// no tree moves any score off the base score.
TEST(QualityBench, XgbPeerParamsReachXgboost) {
  if (!kHaveXgboost) {  // built exactly when libxgboost-dev is there
    EXPECT_FALSE(std::filesystem::exists(BinPath("plrank-xgb-peer")));
    return;
  }
  PLRANK_REQUIRE_SHARED_DATA("MQ2008/S1.txt");
  TempDir dir;
  const std::string data = ::plrank::testing::SharedDataPath("MQ2008/S1.txt");
  auto train = [&](const std::string& params, const std::string& scores) {
    return RunCommand({BinPath("plrank-xgb-peer"), "--train=" + data,
                       "--test=" + data, "--trees=3", "--quiet",
                       "--scores_out=" + dir.File(scores),
                       "--xgb_params=" + params});
  };
  auto distinct_scores = [&](const std::string& scores) {
    std::vector<std::string> lines = absl::StrSplit(
        ReadWholeFile(dir.File(scores)), '\n', absl::SkipEmpty());
    std::sort(lines.begin(), lines.end());
    return std::unique(lines.begin(), lines.end()) - lines.begin();
  };
  const CommandResult moved = train("", "moved.txt");
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  EXPECT_GT(distinct_scores("moved.txt"), 10);
  const CommandResult frozen = train(" eta=0 , max_depth=2", "frozen.txt");
  ASSERT_EQ(frozen.exit_code, 0) << frozen.err;
  EXPECT_EQ(distinct_scores("frozen.txt"), 1);

  const CommandResult malformed = train("max_depth", "bad.txt");
  EXPECT_EQ(malformed.exit_code, 1);
  EXPECT_THAT(malformed.err,
              HasSubstr("--xgb_params: 'max_depth' is not name=value"));
  EXPECT_FALSE(std::filesystem::exists(dir.File("bad.txt")));
}

TEST(QualityBench, BadListsAreRefused) {
  TempDir dir;
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--sets=ohsumed"},
        std::vector<std::string>{"--candidate=nobody"},
        std::vector<std::string>{"--first_seed=0"},
        std::vector<std::string>{"--systems=xgb_map"}}) {
    std::vector<std::string> command = TinyCommand(dir, "sparse", "a=");
    command.insert(command.end(), extra.begin(), extra.end());
    const CommandResult run = RunCommand(command);
    EXPECT_EQ(run.exit_code, 2) << extra[0];
    EXPECT_THAT(run.err, HasSubstr("plrank-bench-quality: ")) << extra[0];
  }
}

TEST(QualityBench, CreatesAMissingWorkDirAndSaysWhyItCannot) {
  TempDir dir;
  std::vector<std::string> command = TinyCommand(dir, "sparse", "a=");
  command.push_back("--systems=");
  const std::string nested = dir.File("runs/today");
  command.push_back("--work_dir=" + nested);  // the last one wins
  const CommandResult run = RunCommand(command);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_TRUE(std::filesystem::is_directory(nested));
  // The run's scratch directory inside it is gone again.
  EXPECT_TRUE(std::filesystem::is_empty(nested));

  // A regular file where a directory should be.
  std::vector<std::string> blocked = TinyCommand(dir, "sparse", "a=");
  blocked.push_back("--systems=");
  blocked.push_back("--work_dir=" + dir.File("quality.md") + "/runs");
  const CommandResult refused = RunCommand(blocked);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err,
              HasSubstr("cannot create the work directory " +
                        dir.File("quality.md") + "/runs: Not a directory"));
}

}  // namespace
}  // namespace plrank::bench

#else
TEST(QualityBench, NeedsTheBenchmarks) {
  GTEST_SKIP() << "configure with -DPLRANK_BUILD_BENCH=ON to build plrank-bench-quality";
}
#endif
