// plrank-convert turns a real XGBoost 1.7 JSON model (a fixture saved by
// libxgboost) into an artifact that plrank-eval reads; bad input fails with a
// message naming the file.
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::RunCommand;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;

const std::string kFixture =
    std::string(PLRANK_SOURCE_DIR) + "/tests/unit/model/testdata/xgb_rank_small.json";

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

TEST(ConvertTest, BadJsonIsRejectedWithTheFileName) {
  TempDir dir;
  std::ofstream(dir.File("bad.json")) << "{\"learner\": 3";
  const auto convert = RunCommand({BinPath("plrank-convert"),
                                   "--xgboost_json=" + dir.File("bad.json"),
                                   "--model_out=" + dir.File("m.pb")});
  EXPECT_NE(convert.exit_code, 0);
  EXPECT_THAT(convert.err, HasSubstr("bad.json"));
}

}  // namespace
}  // namespace plrank
