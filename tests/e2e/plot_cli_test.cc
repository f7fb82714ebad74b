// plrank-plot, as users run it from <build>/bin: every subcommand writes a
// non-empty, valid PNG from small real inputs (plrank-train --history_out,
// plrank-eval --importance and --scores_out, a plrank-repro sweep document).
// Skipped, with a message, only when matplotlib cannot be imported.
#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;

// The PNG signature, then an IHDR chunk of a non-empty image.
void ExpectPng(const std::string& path) {
  const std::string png = ReadWholeFile(path);
  ASSERT_GT(png.size(), 1000u) << path;
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << path;
  EXPECT_EQ(png.substr(12, 4), "IHDR") << path;
  auto be32 = [&png](size_t at) {
    return (static_cast<uint32_t>(static_cast<unsigned char>(png[at])) << 24) |
           (static_cast<unsigned char>(png[at + 1]) << 16) |
           (static_cast<unsigned char>(png[at + 2]) << 8) |
           static_cast<unsigned char>(png[at + 3]);
  };
  EXPECT_GT(be32(16), 100u) << path << " width";
  EXPECT_GT(be32(20), 100u) << path << " height";
}

// NDCG@10 as plrank-eval prints it ("ndcg@10      0.712345").
double EvalNdcg10(const std::string& out) {
  std::smatch match;
  const std::regex line("ndcg@10 +([0-9.]+)");
  if (!std::regex_search(out, match, line)) return -1;
  return std::stod(match[1]);
}

class PlotCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const CommandResult probe =
        RunCommand({PLRANK_PYTHON, "-c", "import matplotlib, numpy"});
    if (probe.exit_code != 0) {
      GTEST_SKIP() << PLRANK_PYTHON << " cannot import matplotlib (install "
                   << "python3-matplotlib: scripts/setup.sh): " << probe.err;
    }
    prefix_ = dir_.File("data");
    const CommandResult gen = RunCommand(
        {BinPath("plrank-datagen"), "--queries=50", "--mean_docs=20",
         "--features=10", "--seed=7", "--out_prefix=" + prefix_});
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
  }

  CommandResult Train(const std::string& model,
                      const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {
        BinPath("plrank-train"), "--train=" + prefix_ + ".train",
        "--valid=" + prefix_ + ".vali", "--trees=8", "--leaves=5",
        "--min_data_in_leaf=5", "--quiet", "--model_out=" + dir_.File(model)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  }

  CommandResult Plot(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {BinPath("plrank-plot")};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }

  TempDir dir_;
  std::string prefix_;
};

TEST_F(PlotCliTest, CurvesFromTheTrainingHistory) {
  const std::string history = dir_.File("history.json");
  ASSERT_EQ(Train("m.pb", {"--eval_at=1,5,10", "--history_out=" + history})
                .exit_code,
            0);
  const CommandResult plot = Plot(
      {"curves", "--history=" + history, "--out=" + dir_.File("curves.png")});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  EXPECT_THAT(plot.out, HasSubstr("(8 iterations, 3 cut-offs"));
  ExpectPng(dir_.File("curves.png"));
}

TEST_F(PlotCliTest, ImportanceByGainAndBySplits) {
  ASSERT_EQ(Train("m.pb", {}).exit_code, 0);
  for (const char* kind : {"gain", "split"}) {
    const std::string out = dir_.File(std::string(kind) + ".png");
    const CommandResult plot =
        Plot({"importance", "--model=" + dir_.File("m.pb"), "--out=" + out,
              std::string("--kind=") + kind, "--top=5"});
    ASSERT_EQ(plot.exit_code, 0) << plot.err;
    EXPECT_THAT(plot.out, HasSubstr(std::string("top 5 of 10 features by ") +
                                    kind));
    ExpectPng(out);
  }
}

// The per-query NDCG@10 of two score files: its means agree with
// plrank-eval's on the same data.
TEST_F(PlotCliTest, CompareTwoScoreFilesPerQuery) {
  ASSERT_EQ(Train("a.pb", {}).exit_code, 0);
  ASSERT_EQ(Train("b.pb", {"--objective=mart2"}).exit_code, 0);
  std::vector<double> eval_means;
  for (const char* name : {"a", "b"}) {
    const std::string base = dir_.File(name);
    const CommandResult eval = RunCommand(
        {BinPath("plrank-eval"), "--model=" + base + ".pb",
         "--data=" + prefix_ + ".test", "--scores_out=" + base + ".txt"});
    ASSERT_EQ(eval.exit_code, 0) << eval.err;
    eval_means.push_back(EvalNdcg10(eval.out));
  }
  const CommandResult plot =
      Plot({"compare", "--data=" + prefix_ + ".test", "--scores",
            dir_.File("a.txt"), dir_.File("b.txt"), "--labels", "PLRank",
            "MART-2", "--out=" + dir_.File("cmp.png")});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(
      plot.out, match,
      std::regex("mean NDCG@10 PLRank ([0-9.]+), MART-2 ([0-9.]+)")))
      << plot.out;
  EXPECT_NEAR(std::stod(match[1]), eval_means[0], 2e-6) << plot.out;
  EXPECT_NEAR(std::stod(match[2]), eval_means[1], 2e-6) << plot.out;
  ExpectPng(dir_.File("cmp.png"));

  // A score file of another data set is refused, naming both counts.
  std::ofstream(dir_.File("short.txt")) << "0.5\n";
  const CommandResult bad =
      Plot({"compare", "--data=" + prefix_ + ".test", "--scores",
            dir_.File("a.txt"), dir_.File("short.txt"),
            "--out=" + dir_.File("bad.png")});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("short.txt: 1 scores for "));
}

// The layout of plrank-repro --sweep_out (bench/repro_sweep.h).
TEST_F(PlotCliTest, Fig2FromASweepDocument) {
  std::ofstream(dir_.File("fig2.json")) << R"({
 "metric": "ndcg@10", "feature_counts": [5, 10, 20], "folds": ["Fold1"],
 "data_features": 46, "config": {"folds_dir": "/tmp/mq"},
 "series": [
  {"system": "listmle", "label": "l-ListMLE", "points": [
   {"features": 5, "ndcg@10": 0.61, "folds": [0.61], "error": null},
   {"features": 10, "ndcg@10": 0.66, "folds": [0.66], "error": null},
   {"features": 20, "ndcg@10": 0.69, "folds": [0.69], "error": null}]},
  {"system": "ca", "label": "CA", "points": [
   {"features": 5, "ndcg@10": 0.63, "folds": [0.63], "error": null},
   {"features": 10, "ndcg@10": 0.67, "folds": [0.67], "error": null},
   {"features": 20, "ndcg@10": null, "folds": [], "error": "failed"}]}]}
)";
  const CommandResult plot = Plot({"fig2", "--sweep=" + dir_.File("fig2.json"),
                                   "--out=" + dir_.File("fig2.png")});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  EXPECT_THAT(plot.out, HasSubstr("(2 systems, 3 feature counts)"));
  ExpectPng(dir_.File("fig2.png"));
}

TEST_F(PlotCliTest, VersionAndMissingInputs) {
  const CommandResult version = Plot({"--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_THAT(version.out,
              ::testing::MatchesRegex("plrank-plot [0-9]+\\.[0-9]+\\.[0-9]+ "
                                      "\\([A-Za-z]+ build\\)\n"));
  const CommandResult missing =
      Plot({"curves", "--history=" + dir_.File("absent.json"),
            "--out=" + dir_.File("x.png")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("absent.json"));
  EXPECT_FALSE(std::ifstream(dir_.File("x.png")).good());
}

}  // namespace
}  // namespace plrank
