// plrank-convert turns a real XGBoost 1.7 JSON model (a fixture saved by
// libxgboost) and real LightGBM 4.6 text models (fixtures in
// ../shared/data/lightgbm-models, with LightGBM's own predictions) into
// artifacts that plrank-eval reads and scores as the source library does;
// bad input fails with a message naming the file.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::SharedDataPath;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;

const std::string kFixture =
    std::string(PLRANK_SOURCE_DIR) + "/tests/unit/import/testdata/xgb_rank_small.json";

TEST(ConvertTest, XgboostJsonBecomesAServableArtifact) {
  TempDir dir;
  const std::string model = dir.File("models/xgb/1/model.pb");
  const auto convert = RunCommand({BinPath("plrank-convert"),
                                   "--xgboost_json=" + kFixture,
                                   "--model_out=" + model});
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
  EXPECT_THAT(convert.out, HasSubstr("6 trees"));
  const auto dump = RunCommand({BinPath("plrank-eval"), "--model=" + model, "--dump"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_THAT(dump.out, HasSubstr("xgboost:rank:pairwise"));
}

// The same model saved by libxgboost as UBJSON (save_model("m.ubj")):
// plrank-convert tells the format from the bytes, and the artifact dumps
// exactly as the JSON one's does.
TEST(ConvertTest, XgboostUbjsonBecomesTheSameArtifact) {
  TempDir dir;
  std::string ubjson = kFixture;
  ubjson.replace(ubjson.size() - 5, 5, ".ubj");
  std::vector<std::string> dumps;
  for (const std::string& source : {kFixture, ubjson}) {
    const std::string model = dir.File("m" + std::to_string(dumps.size()));
    const auto convert =
        RunCommand({BinPath("plrank-convert"), "--xgboost_json=" + source,
                    "--model_out=" + model});
    ASSERT_EQ(convert.exit_code, 0) << convert.err;
    EXPECT_THAT(convert.out, HasSubstr("6 trees"));
    const auto dump =
        RunCommand({BinPath("plrank-eval"), "--model=" + model, "--dump"});
    ASSERT_EQ(dump.exit_code, 0) << dump.err;
    // Everything but the conversion time.
    std::string kept;
    for (absl::string_view line : absl::StrSplit(dump.out, '\n')) {
      if (!absl::StartsWith(line, "created:"))
        absl::StrAppend(&kept, line, "\n");
    }
    dumps.push_back(kept);
  }
  EXPECT_THAT(dumps[1], HasSubstr("xgboost:rank:pairwise"));
  EXPECT_EQ(dumps[0], dumps[1]);
}

TEST(ConvertTest, BadJsonIsRejectedWithTheFileName) {
  TempDir dir;
  std::ofstream(dir.File("bad.json")) << "{\"learner\": 3";
  const auto convert = RunCommand({BinPath("plrank-convert"),
                                   "--xgboost_json=" + dir.File("bad.json"),
                                   "--model_out=" + dir.File("m.pb")});
  EXPECT_NE(convert.exit_code, 0);
  EXPECT_THAT(convert.err, HasSubstr("bad.json"));
}

std::vector<double> ReadNumbers(const std::string& path) {
  std::vector<double> numbers;
  for (absl::string_view line :
       absl::StrSplit(ReadWholeFile(path), '\n', absl::SkipEmpty())) {
    double value = 0;
    EXPECT_TRUE(absl::SimpleAtod(line, &value)) << path << ": " << line;
    numbers.push_back(value);
  }
  return numbers;
}

// Each LightGBM fixture: plrank-convert, then plrank-eval over the test file
// LightGBM predicted; every score must equal LightGBM's raw prediction
// within 1e-5 relative.
TEST(ConvertTest, LightgbmScoresEqualLightgbmPredictions) {
  PLRANK_REQUIRE_SHARED_DATA("lightgbm-models/lambdarank_50x31.txt");
  struct Fixture {
    const char* model;
    const char* data;
    const char* format_version;
  };
  for (const Fixture& fixture :
       {Fixture{"lambdarank_50x31", "lightgbm-example/rank.test", "1"},
        Fixture{"lambdarank_zero_missing_30x15", "lightgbm-example/rank.test",
                "2"},
        Fixture{"xendcg_nan_40x63", "lightgbm-models/rank_nan.test", "1"}}) {
    SCOPED_TRACE(fixture.model);
    TempDir dir;
    const std::string source = SharedDataPath(
        std::string("lightgbm-models/") + fixture.model + ".txt");
    const std::string model = dir.File("models/lgbm/1/model.pb");
    const auto convert =
        RunCommand({BinPath("plrank-convert"), "--lightgbm_model=" + source,
                    "--model_out=" + model});
    ASSERT_EQ(convert.exit_code, 0) << convert.err;
    EXPECT_THAT(convert.out, HasSubstr("300 features"));
    EXPECT_THAT(convert.out,
                HasSubstr(std::string("format version ") +
                          fixture.format_version));
    const auto dump =
        RunCommand({BinPath("plrank-eval"), "--model=" + model, "--dump"});
    ASSERT_EQ(dump.exit_code, 0) << dump.err;
    EXPECT_THAT(dump.out, HasSubstr(std::string("PLRank model (format version ") +
                                    fixture.format_version + ")"));
    // Stamped with the conversion time, not left at 1970.
    EXPECT_THAT(dump.out, ::testing::Not(HasSubstr("created: 1970")));
    const std::string scores = dir.File("scores.txt");
    const auto eval = RunCommand({BinPath("plrank-eval"), "--model=" + model,
                                  "--data=" + SharedDataPath(fixture.data),
                                  "--scores_out=" + scores});
    ASSERT_EQ(eval.exit_code, 0) << eval.err;
    const std::vector<double> ours = ReadNumbers(scores);
    const std::vector<double> lightgbm = ReadNumbers(
        SharedDataPath(std::string("lightgbm-models/") + fixture.model +
                       ".pred"));
    ASSERT_EQ(ours.size(), lightgbm.size());
    ASSERT_GT(ours.size(), 700u);
    double max_relative = 0;
    for (size_t i = 0; i < ours.size(); ++i) {
      const double scale = std::max(std::abs(ours[i]), std::abs(lightgbm[i]));
      const double relative =
          scale == 0 ? 0 : std::abs(ours[i] - lightgbm[i]) / scale;
      max_relative = std::max(max_relative, relative);
      EXPECT_LE(relative, 1e-5) << "document " << i + 1 << ": ours "
                                << ours[i] << ", LightGBM " << lightgbm[i];
    }
    std::printf("%s: %zu documents, max relative difference %.3g\n",
                fixture.model, ours.size(), max_relative);
    RecordProperty(std::string(fixture.model) + "_max_relative",
                   std::to_string(max_relative));
  }
}

TEST(ConvertTest, LightgbmLinearTreeIsRefusedWithTheReason) {
  PLRANK_REQUIRE_SHARED_DATA("lightgbm-models/linear_tree_unsupported.txt");
  TempDir dir;
  const std::string source =
      SharedDataPath("lightgbm-models/linear_tree_unsupported.txt");
  const auto convert =
      RunCommand({BinPath("plrank-convert"), "--lightgbm_model=" + source,
                  "--model_out=" + dir.File("m.pb")});
  EXPECT_EQ(convert.exit_code, 1);
  EXPECT_THAT(convert.err, HasSubstr("linear_tree_unsupported.txt:27"));
  EXPECT_THAT(convert.err, HasSubstr("linear trees (linear_tree=true)"));
  EXPECT_FALSE(std::ifstream(dir.File("m.pb")).good());
}

TEST(ConvertTest, ExactlyOneSourceModelIsRequired) {
  TempDir dir;
  const auto both = RunCommand(
      {BinPath("plrank-convert"), "--xgboost_json=" + kFixture,
       "--lightgbm_model=m.txt", "--model_out=" + dir.File("m.pb")});
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_THAT(both.err, HasSubstr("exactly one of"));
  const auto neither = RunCommand(
      {BinPath("plrank-convert"), "--model_out=" + dir.File("m.pb")});
  EXPECT_EQ(neither.exit_code, 1);
}

}  // namespace
}  // namespace plrank
