// Sampled rankings and the impression log through the real plrank-server on
// loopback: Rank and RankBatch with a sampling spec (reproducible from the
// seed, probabilities consistent), today's ranking without one, the C++
// client and plrank-client, the log files published at shutdown, and drops
// counted, never failed, when the log directory goes away.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "clients/cpp/ranker_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "tests/testing/eventually.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::Eventually;
using ::plrank::testing::HttpGet;
using ::plrank::testing::MetricValue;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;

v1::RankRequest WebQueryOfDocuments(const std::string& id, int documents) {
  v1::RankRequest request;
  request.mutable_model_spec()->set_name("web");
  request.set_query_id(id);
  for (int i = 0; i < documents; ++i) {
    v1::Document* document = request.add_documents();
    document->set_id(id + "-" + std::to_string(i));
    for (float v : {0.0f, 0.3f * static_cast<float>(i % 7), 0.0f, 0.0f}) {
      document->mutable_dense()->add_values(v);
    }
  }
  return request;
}

std::vector<uint32_t> Order(const v1::RankResponse& response) {
  std::vector<uint32_t> order;
  for (const v1::ScoredDocument& d : response.documents()) {
    order.push_back(d.request_index());
  }
  return order;
}

std::vector<std::string> ImpressionFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("impressions-", 0) == 0) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ClicksServing, SampledRankAndRankBatchAndTheImpressionLog) {
  TempDir dir;
  testing::WriteTestModel(dir.File("models"), "web", 1);
  std::filesystem::create_directories(dir.File("log"));
  auto server = std::make_unique<ServerProcess>(std::vector<std::string>{
      "--model_base_path=" + dir.File("models"),
      "--impression_log_dir=" + dir.File("log")});
  ASSERT_TRUE(server->ok()) << server->Logs();
  auto client = RankerClient::Create(server->target());
  ASSERT_TRUE(client.ok());

  // No spec: today's ranking, no request id, nothing logged.
  const v1::RankRequest plain = WebQueryOfDocuments("q1", 12);
  // The server listens before its first repository scan has loaded 'web'
  // (on a busy machine the first request can beat it): wait for the model.
  // Plain requests are never logged, so the retries leave no trace.
  auto deterministic = (*client)->Rank(plain);
  testing::Eventually([&] {
    if (deterministic.status().code() != absl::StatusCode::kNotFound) {
      return true;
    }
    deterministic = (*client)->Rank(plain);
    return false;
  });
  ASSERT_TRUE(deterministic.ok()) << deterministic.status();
  EXPECT_FALSE(deterministic->sampled());
  EXPECT_TRUE(deterministic->request_id().empty());
  // Temperature 0: the same order, pick probabilities 1; logged.
  v1::RankRequest cold = plain;
  cold.mutable_sampling()->set_temperature(0);
  cold.set_request_id("cold-1");
  auto cold_response = (*client)->Rank(cold);
  ASSERT_TRUE(cold_response.ok());
  EXPECT_EQ(Order(*cold_response), Order(*deterministic));
  EXPECT_EQ(cold_response->documents(0).pick_probability(), 1.0);
  EXPECT_EQ(cold_response->request_id(), "cold-1");

  // Sampled: reproducible from the seed, probabilities consistent.
  v1::RankRequest sampled = plain;
  sampled.mutable_sampling()->set_temperature(1.0);
  sampled.mutable_sampling()->set_seed(77);
  sampled.mutable_sampling()->set_top_k(5);
  sampled.mutable_sampling()->set_marginal_samples(500);
  auto first = (*client)->Rank(sampled);
  ASSERT_TRUE(first.ok()) << first.status();
  auto again = (*client)->Rank(sampled);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(first->sampled());
  EXPECT_EQ(first->sampling_seed(), 77u);
  EXPECT_EQ(first->documents_size(), 5);
  EXPECT_EQ(Order(*first), Order(*again));
  EXPECT_EQ(first->request_id().size(), 32u) << "generated for the log";
  double log_probability = 0;
  for (const v1::ScoredDocument& d : first->documents()) {
    EXPECT_GT(d.pick_probability(), 0.0);
    EXPECT_LE(d.pick_probability(), 1.0);
    log_probability += std::log(d.pick_probability());
    ASSERT_EQ(d.position_probabilities_size(), 5);
  }
  EXPECT_NEAR(first->log_probability(), log_probability, 1e-9);
  // Another seed, another draw (12 documents at temperature 1: the two
  // top-5 prefixes agree with tiny probability for these seeds).
  v1::RankRequest other = sampled;
  other.mutable_sampling()->set_seed(78);
  auto other_response = (*client)->Rank(other);
  ASSERT_TRUE(other_response.ok());
  EXPECT_NE(Order(*other_response), Order(*first));

  // RankBatch: each query as Rank answers it.
  v1::RankRequest second_query = WebQueryOfDocuments("q2", 8);
  *second_query.mutable_sampling() = sampled.sampling();
  second_query.set_request_id("batch-2");
  auto batch = (*client)->RankBatch({sampled, second_query});
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->size(), 2u);
  ASSERT_TRUE((*batch)[0].ok());
  EXPECT_EQ(Order(*(*batch)[0]), Order(*first));
  ASSERT_TRUE((*batch)[1].ok());
  EXPECT_TRUE((*batch)[1]->sampled());
  EXPECT_EQ((*batch)[1]->request_id(), "batch-2");

  // A bad spec is INVALID_ARGUMENT naming the field, per query in a batch.
  v1::RankRequest bad = plain;
  bad.mutable_sampling()->set_temperature(-2);
  auto refused = (*client)->Rank(bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("sampling.temperature"));

  // SIGTERM publishes the open file: 1 cold + 3 sampled Rank queries and
  // the 2 batch queries, one line per request document.
  EXPECT_EQ(server->Stop(SIGTERM, std::chrono::seconds(30)), 0)
      << server->Logs();
  const std::vector<std::string> files = ImpressionFiles(dir.File("log"));
  ASSERT_EQ(files.size(), 1u) << server->Logs();
  const std::string text = ReadWholeFile(files[0]);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 12 + 3 * 12 + 12 + 8);
  EXPECT_THAT(text, HasSubstr("qid:batch-2 1:0 2:0 3:0 4:0 # request_id=batch-2 "
                              "query=q2 doc=q2-0 position="));
  EXPECT_THAT(text, HasSubstr("request_id=cold-1 query=q1 doc=q1-6 "));
  EXPECT_THAT(text, HasSubstr("temperature=1 top_k=5 seed=77 model=web "
                              "version=1 documents=12"));
  EXPECT_THAT(text, HasSubstr("request_id=" + first->request_id()));
}

TEST(ClicksServing, PlrankClientSamples) {
  TempDir dir;
  testing::WriteTestModel(dir.File("models"), "web", 1);
  {
    std::ofstream data(dir.File("data.txt"));
    for (int i = 0; i < 6; ++i) {
      data << (i % 3) << " qid:1 1:0 2:" << 0.2 * i << " 3:0 4:0\n";
    }
  }
  ServerProcess server({"--model_base_path=" + dir.File("models")});
  ASSERT_TRUE(server.ok()) << server.Logs();
  const std::vector<std::string> argv = {
      BinPath("plrank-client"), "rank", "--target=" + server.target(),
      "--model=web", "--data=" + dir.File("data.txt"),
      "--sample_temperature=1", "--sample_seed=9", "--marginal_samples=100"};
  const CommandResult once = RunCommand(argv);
  ASSERT_EQ(once.exit_code, 0) << once.err;
  EXPECT_THAT(once.out, HasSubstr("sampled yes"));
  EXPECT_THAT(once.out, HasSubstr(" pick "));
  EXPECT_THAT(once.out, HasSubstr("shown-here"));
  // The ranking lines repeat with the seed (the timing line differs).
  const CommandResult twice = RunCommand(argv);
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  EXPECT_EQ(once.out.substr(0, once.out.find("ranked ")),
            twice.out.substr(0, twice.out.find("ranked ")));
  std::vector<std::string> batch_argv = argv;
  batch_argv[1] = "rank-batch";
  const CommandResult batch = RunCommand(batch_argv);
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  EXPECT_EQ(batch.out.substr(0, batch.out.find("ranked ")),
            once.out.substr(0, once.out.find("ranked ")));
}

TEST(ClicksServing, AnUnwritableLogDropsAndCountsButAnswers) {
  TempDir dir;
  testing::WriteTestModel(dir.File("models"), "web", 1);
  std::filesystem::create_directories(dir.File("log"));
  ServerProcess server({"--model_base_path=" + dir.File("models"),
                        "--impression_log_dir=" + dir.File("log"),
                        "--impression_log_max_file_bytes=1"});
  ASSERT_TRUE(server.ok()) << server.Logs();
  std::filesystem::remove_all(dir.File("log"));
  auto client = RankerClient::Create(server.target());
  ASSERT_TRUE(client.ok());
  v1::RankRequest request = WebQueryOfDocuments("q", 5);
  request.mutable_sampling()->set_temperature(0.5);
  for (int i = 0; i < 3; ++i) {
    auto response = (*client)->Rank(request);
    ASSERT_TRUE(response.ok()) << response.status();
  }
  const std::string series =
      "plrank_impression_log_entries_total{result=\"write_failed\"}";
  EXPECT_TRUE(Eventually([&] {
    return MetricValue(HttpGet(server.metrics_port(), "/metrics"), series)
               .value_or(0) == 3;
  })) << HttpGet(server.metrics_port(), "/metrics");
  EXPECT_THAT(server.stderr_text(), HasSubstr("impression_log_write_failed"));
}

}  // namespace
}  // namespace plrank
