// The whole learning-from-clicks loop through the real plrank-server
// (docs/clicks-serving.md): a weak model serves sampled rankings with the
// impression log on; clicks are simulated on the logged impressions from a
// position-based model of the true grades; plrank-logs join makes training
// files; plrank-train retrains on the clicks (with --position_debias=ips
// when this plrank-train has it); plrank-eval --logged estimates the
// candidate counterfactually (and refuses deterministic logs); the new
// model is published as version 2 and ranks the held-out queries better
// on their true grades than version 1. Every step is seeded.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "clients/cpp/dataset_documents.h"
#include "clients/cpp/ranker_client.h"
#include "core/data/letor_reader.h"
#include "core/data/random.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::plrank::testing::RunBounded;

// The commands train and log whole sessions: a generous bound.
constexpr int kCommandSeconds = 300;
using ::testing::HasSubstr;

constexpr int kSessions = 20;      // sampled rankings per training query
constexpr uint32_t kShown = 10;    // positions shown per ranking

// The server loads models on its scanning thread after it starts listening:
// wait (bounded) until model "web" is SERVING on the health service.
void ExpectServingWeb(ServerProcess& server) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (plrank::testing::HealthCheck(server.channel(), "plrank.v1.Ranker/web") != 1) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << "model web never became SERVING\n" << server.Logs();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Logs every query of `data` `sessions` times through RankBatch with the
// given temperature; request ids "s<session>-q<query>".
void LogSessions(const std::string& target, const Dataset& data,
                 int sessions, double temperature) {
  auto client = RankerClient::Create(target);
  ASSERT_TRUE(client.ok());
  for (int s = 0; s < sessions; ++s) {
    std::vector<v1::RankRequest> batch(data.num_queries());
    for (size_t q = 0; q < data.num_queries(); ++q) {
      v1::RankRequest& request = batch[q];
      request.mutable_model_spec()->set_name("web");
      request.set_query_id(data.query_ids[q]);
      request.set_request_id(absl::StrCat("s", s, "-q", q));
      request.mutable_sampling()->set_temperature(temperature);
      request.mutable_sampling()->set_seed(1000003ULL * (s + 1) + q);
      request.mutable_sampling()->set_top_k(kShown);
      FillRankRequest(data, q, &request);
    }
    auto results = (*client)->RankBatch(batch);
    ASSERT_TRUE(results.ok()) << results.status();
    for (const auto& result : *results) ASSERT_TRUE(result.ok()) << result.status();
  }
}

std::vector<std::string> LogFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("impressions-", 0) == 0) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Clicks of a position-based model: a document shown at position p is
// examined with probability 1 / p and, examined, clicked with probability
// (2^grade - 1) / (2^max_grade - 1). Document ids are input-line indices.
std::string SimulateClicks(const std::string& log_dir, const Dataset& data) {
  const double max_gain = std::pow(2.0, data.max_label()) - 1.0;
  Xoshiro256 random(2024, 0);
  std::string clicks;
  for (const std::string& file : LogFiles(log_dir)) {
    std::istringstream lines(ReadWholeFile(file));
    std::string line;
    while (std::getline(lines, line)) {
      std::string request_id, doc;
      uint32_t position = 0;
      for (absl::string_view field :
           absl::StrSplit(line.substr(line.find(" # ") + 3), ' ')) {
        if (absl::ConsumePrefix(&field, "request_id=")) {
          request_id = std::string(field);
        } else if (absl::ConsumePrefix(&field, "doc=")) {
          doc = std::string(field);
        } else if (absl::ConsumePrefix(&field, "position=")) {
          EXPECT_TRUE(absl::SimpleAtoi(field, &position));
        }
      }
      if (position == 0) continue;
      size_t index = 0;
      EXPECT_TRUE(absl::SimpleAtoi(doc, &index)) << line;
      const double attraction =
          (std::pow(2.0, data.labels.at(index)) - 1.0) / max_gain;
      if (random.Uniform() < attraction / position) {
        absl::StrAppend(&clicks, request_id, " ", doc, "\n");
      }
    }
  }
  return clicks;
}

double Ndcg10(RankerClient& client, int64_t version, const Dataset& data) {
  EvaluateOptions options;
  options.ndcg_at = {10};
  auto response = client.Evaluate({"web", version, ""}, data, options);
  EXPECT_TRUE(response.ok()) << response.status();
  if (!response.ok()) return -1;
  for (const v1::MetricValue& metric : response->metrics()) {
    if (metric.name() == "ndcg@10") return metric.value();
  }
  return -1;
}

TEST(ClicksLoop, ServeLogJoinRetrainPublishRanksBetter) {
  TempDir dir;
  const std::string prefix = dir.File("data");
  const CommandResult gen = RunBounded(
      {BinPath("plrank-datagen"), "--queries=150", "--mean_docs=30",
       "--features=10", "--seed=7", "--out_prefix=" + prefix}, kCommandSeconds);
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  // Version 1, the logging policy: a few trees on the first 6 queries.
  auto train = ReadLetorFile(prefix + ".train", ReadOptions());
  ASSERT_TRUE(train.ok()) << train.status();
  auto test = ReadLetorFile(prefix + ".test", ReadOptions());
  ASSERT_TRUE(test.ok()) << test.status();
  {
    std::istringstream all(ReadWholeFile(prefix + ".train"));
    std::ofstream small(dir.File("small.train"));
    std::string line;
    size_t lines = 0;
    while (std::getline(all, line) && lines < train->query_end(5)) {
      small << line << "\n";
      ++lines;
    }
  }
  std::filesystem::create_directories(dir.File("models/web/1"));
  std::filesystem::create_directories(dir.File("models/web/2"));
  const CommandResult v1_train = RunBounded(
      {BinPath("plrank-train"), "--train=" + dir.File("small.train"),
       "--trees=3", "--leaves=4", "--min_data_in_leaf=5", "--num_threads=1",
       "--quiet", "--model_out=" + dir.File("models/web/1/model.pb")}, kCommandSeconds);
  ASSERT_EQ(v1_train.exit_code, 0) << v1_train.err;

  // Serve version 1 with sampling and the impression log.
  std::filesystem::create_directories(dir.File("log"));
  {
    ServerProcess server({"--model_base_path=" + dir.File("models"),
                          "--poll_interval_seconds=0",
                          "--impression_log_dir=" + dir.File("log")});
    ASSERT_TRUE(server.ok()) << server.Logs();
    ASSERT_NO_FATAL_FAILURE(ExpectServingWeb(server));
    LogSessions(server.target(), *train, kSessions, 1.0);
    ASSERT_EQ(server.Stop(SIGTERM, std::chrono::seconds(60)), 0)
        << server.Logs();
  }
  ASSERT_FALSE(LogFiles(dir.File("log")).empty());

  // Clicks, join.
  {
    std::ofstream clicks(dir.File("clicks.txt"));
    clicks << SimulateClicks(dir.File("log"), *train);
  }
  const std::string joined = dir.File("joined");
  const CommandResult join = RunBounded(
      {BinPath("plrank-logs"), "join", "--impressions=" + dir.File("log"),
       "--clicks=" + dir.File("clicks.txt"), "--output=" + joined,
       "--marginal_samples=200"}, kCommandSeconds);
  ASSERT_EQ(join.exit_code, 0) << join.err;
  size_t shown_per_session = 0;  // queries may hold fewer than kShown
  for (size_t q = 0; q < train->num_queries(); ++q) {
    shown_per_session += std::min<size_t>(
        kShown, train->query_end(q) - train->query_begin(q));
  }
  EXPECT_THAT(join.out,
              HasSubstr(absl::StrCat(kSessions * train->num_queries(),
                                     " requests, ",
                                     kSessions * shown_per_session, " shown of ",
                                     kSessions * train->num_documents(),
                                     " candidate documents")));
  EXPECT_THAT(join.out, HasSubstr("(0 unmatched)"));

  // Retrain on the clicks, debiased when plrank-train can.
  const CommandResult help = RunCommand({BinPath("plrank-train"), "--helpfull"});
  const bool has_ips =
      (help.out + help.err).find("position_debias") != std::string::npos;
  std::vector<std::string> retrain = {
      BinPath("plrank-train"), "--train=" + joined, "--trees=60",
      "--leaves=15", "--num_threads=1", "--quiet",
      "--model_out=" + dir.File("models/web/2/model.pb")};
  if (has_ips) {
    retrain.push_back("--position_debias=ips");
    retrain.push_back("--position_file=" + joined + ".position");
    retrain.push_back("--propensity_file=" + joined + ".propensity");
  }
  const CommandResult v2_train = RunBounded(retrain, kCommandSeconds);
  ASSERT_EQ(v2_train.exit_code, 0) << v2_train.err;
  std::printf("retrained %s IPS debiasing\n", has_ips ? "with" : "without");

  // Counterfactual estimate of the candidate from the logs.
  const CommandResult estimate = RunBounded(
      {BinPath("plrank-eval"), "--logged=" + joined,
       "--model=" + dir.File("models/web/2/model.pb")}, kCommandSeconds);
  ASSERT_EQ(estimate.exit_code, 0) << estimate.err;
  EXPECT_THAT(estimate.out, HasSubstr("candidate clicks (SNIPS)"));
  std::printf("%s", estimate.out.c_str());

  // Deterministic logs (temperature 0) cannot evaluate another ranking.
  std::filesystem::create_directories(dir.File("log0"));
  {
    ServerProcess server({"--model_base_path=" + dir.File("models"),
                          "--poll_interval_seconds=0",
                          "--impression_log_dir=" + dir.File("log0")});
    ASSERT_TRUE(server.ok()) << server.Logs();
    ASSERT_NO_FATAL_FAILURE(ExpectServingWeb(server));
    // Pinned to version 1 (version 2 is there too by now).
    auto client = RankerClient::Create(server.target());
    ASSERT_TRUE(client.ok());
    std::vector<v1::RankRequest> batch(train->num_queries());
    for (size_t q = 0; q < train->num_queries(); ++q) {
      batch[q].mutable_model_spec()->set_name("web");
      batch[q].mutable_model_spec()->set_version(1);
      batch[q].mutable_sampling()->set_temperature(0);
      batch[q].mutable_sampling()->set_top_k(kShown);
      FillRankRequest(*train, q, &batch[q]);
    }
    ASSERT_TRUE((*client)->RankBatch(batch).ok());
    ASSERT_EQ(server.Stop(SIGTERM, std::chrono::seconds(60)), 0);
  }
  std::ofstream(dir.File("no_clicks.txt")) << "";
  const CommandResult join0 = RunBounded(
      {BinPath("plrank-logs"), "join", "--impressions=" + dir.File("log0"),
       "--clicks=" + dir.File("no_clicks.txt"),
       "--output=" + dir.File("joined0")}, kCommandSeconds);
  ASSERT_EQ(join0.exit_code, 0) << join0.err;
  const CommandResult refused = RunBounded(
      {BinPath("plrank-eval"), "--logged=" + dir.File("joined0"),
       "--model=" + dir.File("models/web/2/model.pb")}, kCommandSeconds);
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_THAT(refused.err, HasSubstr("no support"));
  EXPECT_THAT(refused.err,
              HasSubstr(absl::StrCat(" of ", shown_per_session,
                                     " candidate placements")));

  // Publish: version 2 is the server's default and ranks the test queries
  // better on their true grades.
  ServerProcess server({"--model_base_path=" + dir.File("models"),
                        "--poll_interval_seconds=0"});
  ASSERT_TRUE(server.ok()) << server.Logs();
  ASSERT_NO_FATAL_FAILURE(ExpectServingWeb(server));
  auto client = RankerClient::Create(server.target());
  ASSERT_TRUE(client.ok());
  auto status = (*client)->GetModelStatus("web");
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->default_version(), 2);
  const double before = Ndcg10(**client, 1, *test);
  const double after = Ndcg10(**client, 2, *test);
  std::printf("test NDCG@10: version 1 %.4f, version 2 %.4f\n", before, after);
  EXPECT_GT(after, before + 0.02);
}

}  // namespace
}  // namespace plrank
