// plrank-server serves LightGBM rankers: LightGBM 4.6 models (fixtures in
// ../shared/data/lightgbm-models) converted by plrank-convert into a model
// repository, loaded by the real server and ranked over loopback gRPC with
// the RankerClient library. Every served score must equal LightGBM's own
// prediction (.pred) within 1e-5 relative, including the zero-as-missing
// model (artifact format version 2) and NaN features sent in requests.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "clients/cpp/ranker_client.h"
#include "core/data/letor_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"
#include "tests/testing/shared_data.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::SharedDataPath;
using ::plrank::testing::TempDir;

struct Fixture {
  const char* model;  // served under this name, version 1
  const char* data;   // the file LightGBM predicted
};

constexpr Fixture kFixtures[] = {
    {"lambdarank_zero_missing_30x15", "lightgbm-example/rank.test"},
    {"xendcg_nan_40x63", "lightgbm-models/rank_nan.test"},
};

std::vector<double> ReadPredictions(const std::string& path) {
  std::vector<double> numbers;
  for (absl::string_view line :
       absl::StrSplit(ReadWholeFile(path), '\n', absl::SkipEmpty())) {
    double value = 0;
    EXPECT_TRUE(absl::SimpleAtod(line, &value)) << path << ": " << line;
    numbers.push_back(value);
  }
  return numbers;
}

TEST(LightgbmServingTest, ServedScoresEqualLightgbmPredictions) {
  PLRANK_REQUIRE_SHARED_DATA(
      "lightgbm-models/lambdarank_zero_missing_30x15.txt");
  TempDir base;
  for (const Fixture& fixture : kFixtures) {
    const auto convert = RunCommand(
        {BinPath("plrank-convert"),
         "--lightgbm_model=" + SharedDataPath(std::string("lightgbm-models/") +
                                              fixture.model + ".txt"),
         "--model_out=" +
             base.File(std::string(fixture.model) + "/1/model.pb")});
    ASSERT_EQ(convert.exit_code, 0) << convert.err;
  }
  ServerProcess server(
      {"--model_base_path=" + base.path(), "--poll_interval_seconds=0"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  absl::StatusOr<std::unique_ptr<RankerClient>> client =
      RankerClient::Create(server.target());
  ASSERT_TRUE(client.ok()) << client.status();
  // Startup scans once; ReloadModels waits for that scan to finish.
  ASSERT_TRUE((*client)->ReloadModels().ok()) << server.stderr_text();

  for (const Fixture& fixture : kFixtures) {
    SCOPED_TRACE(fixture.model);
    absl::StatusOr<v1::ModelStatus> status =
        (*client)->GetModelStatus(fixture.model);
    ASSERT_TRUE(status.ok()) << status.status();
    ASSERT_EQ(status->versions_size(), 1);
    EXPECT_EQ(status->versions(0).state(), v1::VERSION_STATE_AVAILABLE)
        << status->versions(0).error();
    EXPECT_THAT(status->versions(0).metadata().objective(),
                ::testing::StartsWith("lightgbm:"));
    EXPECT_EQ(status->versions(0).metadata().num_features(), 300u);

    ReadOptions read;
    read.num_features = 300;
    absl::StatusOr<Dataset> data =
        ReadLetorFile(SharedDataPath(fixture.data), read);
    ASSERT_TRUE(data.ok()) << data.status();
    const std::vector<double> lightgbm = ReadPredictions(SharedDataPath(
        std::string("lightgbm-models/") + fixture.model + ".pred"));
    ASSERT_EQ(lightgbm.size(), data->num_documents());

    size_t scored = 0;
    double max_relative = 0;
    for (size_t q = 0; q < data->num_queries(); ++q) {
      absl::StatusOr<v1::RankResponse> response =
          (*client)->RankQuery({fixture.model, 0, ""}, *data, q);
      ASSERT_TRUE(response.ok()) << response.status();
      EXPECT_EQ(response->model_version(), 1);
      for (const v1::ScoredDocument& document : response->documents()) {
        // Document ids are input line indices (0-based).
        size_t line = 0;
        ASSERT_TRUE(absl::SimpleAtoi(document.id(), &line)) << document.id();
        ASSERT_LT(line, lightgbm.size());
        const double expected = lightgbm[line];
        const double scale =
            std::max(std::abs(expected), std::abs(document.score()));
        const double relative =
            scale == 0 ? 0 : std::abs(document.score() - expected) / scale;
        max_relative = std::max(max_relative, relative);
        EXPECT_LE(relative, 1e-5)
            << "line " << line + 1 << ": served " << document.score()
            << ", LightGBM " << expected;
        ++scored;
      }
    }
    EXPECT_EQ(scored, data->num_documents());
    RecordProperty(std::string(fixture.model) + "_max_relative",
                   std::to_string(max_relative));
  }
}

}  // namespace
}  // namespace plrank
