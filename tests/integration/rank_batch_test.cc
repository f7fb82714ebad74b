// RankBatch over the real plrank-server on loopback: each query answered as
// Rank would, per-query errors that leave the other queries alone, the
// batch limits, the per-query metrics, and plrank-client rank-batch
// against plrank-client rank.

#include <chrono>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "clients/cpp/ranker_client.h"
#include "core/data/letor_reader.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "tests/testing/client_context.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank {
namespace {

using ::plrank::testing::ClientContextFor;
using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::HttpGet;
using ::plrank::testing::MetricValue;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::plrank::testing::RunBounded;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kMaxBatchQueries = 7;
constexpr int kMaxBatchDocuments = 60;
constexpr int kMaxDocumentsPerRequest = 25;

v1::RankRequest WebQuery(const std::string& id, std::vector<float> x0s) {
  v1::RankRequest request;
  request.mutable_model_spec()->set_name("web");
  request.set_query_id(id);
  for (size_t i = 0; i < x0s.size(); ++i) {
    v1::Document* document = request.add_documents();
    document->set_id(id + "-" + std::to_string(i));
    for (float v : {x0s[i], 0.1f * static_cast<float>(i), 0.0f, 0.0f}) {
      document->mutable_dense()->add_values(v);
    }
  }
  return request;
}

class RankBatchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    testing::WriteTestModel(dir_->File("models"), "web", 1);
    testing::WriteTestModel(dir_->File("models"), "news", 4);
    const std::string prefix = dir_->File("data");
    const CommandResult gen =
        RunBounded({BinPath("plrank-datagen"), "--queries=60", "--mean_docs=6",
                    "--features=10", "--seed=2", "--out_prefix=" + prefix});
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
    std::filesystem::create_directories(dir_->File("models/demo/1"));
    const CommandResult train = RunBounded(
        {BinPath("plrank-train"), "--train=" + prefix + ".train", "--trees=10",
         "--leaves=5", "--min_data_in_leaf=3", "--quiet",
         "--model_out=" + dir_->File("models/demo/1/model.pb")});
    ASSERT_EQ(train.exit_code, 0) << train.err;
    server_ = new ServerProcess(
        {"--model_base_path=" + dir_->File("models"),
         "--poll_interval_seconds=0",
         "--max_batch_queries=" + std::to_string(kMaxBatchQueries),
         "--max_batch_documents=" + std::to_string(kMaxBatchDocuments),
         "--max_documents_per_request=" +
             std::to_string(kMaxDocumentsPerRequest)});
    ASSERT_TRUE(server_->ok()) << server_->stderr_text();
    v1::ReloadModelsResponse reloaded;
    grpc::Status status = server_->stub().ReloadModels(
        ClientContextFor(30, false).get(), v1::ReloadModelsRequest(), &reloaded);
    ASSERT_TRUE(status.ok()) << status.error_message();
    client_ = RankerClient::Create(server_->target())->release();
  }
  static void TearDownTestSuite() {
    delete client_;
    delete server_;
    delete dir_;
  }
  static CommandResult Client(std::vector<std::string> args) {
    args.insert(args.begin(),
                {BinPath("plrank-client"), "--target=" + server_->target()});
    return RunBounded(args);
  }

  static TempDir* dir_;
  static ServerProcess* server_;
  static RankerClient* client_;
};
TempDir* RankBatchTest::dir_ = nullptr;
ServerProcess* RankBatchTest::server_ = nullptr;
RankerClient* RankBatchTest::client_ = nullptr;

TEST_F(RankBatchTest, EachQueryIsRankedAsRankWouldRankIt) {
  std::vector<v1::RankRequest> requests = {WebQuery("a", {0.0f, 1.0f, 0.7f}),
                                           WebQuery("b", {1.0f, 0.0f})};
  requests[1].set_top_k(1);
  v1::RankRequest news = WebQuery("c", {1.0f});
  news.mutable_model_spec()->set_name("news");
  requests.push_back(news);
  auto results = client_->RankBatch(requests);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 3u);
  for (size_t i = 0; i < requests.size(); ++i) {
    ASSERT_TRUE((*results)[i].ok()) << (*results)[i].status();
    absl::StatusOr<v1::RankResponse> single = client_->Rank(requests[i]);
    ASSERT_TRUE(single.ok()) << single.status();
    EXPECT_EQ((*results)[i]->SerializeAsString(), single->SerializeAsString())
        << "query " << i;
  }
  EXPECT_EQ((*results)[0]->documents_size(), 3);
  // Scores 99, 101.1 and 101.2.
  EXPECT_EQ((*results)[0]->documents(0).id(), "a-2");
  EXPECT_DOUBLE_EQ((*results)[0]->documents(0).score(),
                   testing::TestModelScore(1, 0.7f, 0.2f));
  EXPECT_EQ((*results)[1]->documents_size(), 1);
  EXPECT_EQ((*results)[2]->model_name(), "news");
  EXPECT_EQ((*results)[2]->model_version(), 4);
}

TEST_F(RankBatchTest, ABadQueryFailsAloneWithItsOwnStatus) {
  std::vector<v1::RankRequest> requests;
  requests.push_back(WebQuery("good1", {0.0f, 1.0f}));
  v1::RankRequest wrong_width = WebQuery("wide", {1.0f});
  wrong_width.mutable_documents(0)->mutable_dense()->add_values(2.0f);
  requests.push_back(wrong_width);
  v1::RankRequest unknown = WebQuery("unknown", {1.0f});
  unknown.mutable_model_spec()->set_name("nope");
  requests.push_back(unknown);
  requests.push_back(WebQuery("empty", {}));
  requests.push_back(WebQuery("too-many", std::vector<float>(26, 0.5f)));
  v1::RankRequest pinned = WebQuery("pinned", {1.0f});
  pinned.mutable_model_spec()->set_version(7);
  requests.push_back(pinned);
  requests.push_back(WebQuery("good2", {1.0f}));
  auto results = client_->RankBatch(requests);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), requests.size());
  EXPECT_TRUE((*results)[0].ok());
  EXPECT_EQ((*results)[1].status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT((*results)[1].status().message(), HasSubstr("5 dense features"));
  EXPECT_EQ((*results)[2].status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT((*results)[2].status().message(),
              HasSubstr("unknown model 'nope'"));
  EXPECT_EQ((*results)[3].status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*results)[4].status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ((*results)[5].status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE((*results)[6].ok());
  EXPECT_EQ((*results)[6]->query_id(), "good2");

  // On the wire: code + message, and no response for a failed query.
  v1::RankBatchRequest raw;
  *raw.add_requests() = requests[0];
  *raw.add_requests() = requests[2];
  v1::RankBatchResponse response;
  ASSERT_TRUE(server_->stub().RankBatch(ClientContextFor(30, false).get(), raw, &response).ok());
  ASSERT_EQ(response.results_size(), 2);
  EXPECT_EQ(response.results(0).status().code(), 0);
  EXPECT_TRUE(response.results(0).has_response());
  EXPECT_EQ(response.results(1).status().code(),
            static_cast<int>(grpc::StatusCode::NOT_FOUND));
  EXPECT_FALSE(response.results(1).has_response());
}

TEST_F(RankBatchTest, BatchLimitsFailTheWholeCall) {
  v1::RankBatchRequest empty;
  v1::RankBatchResponse response;
  grpc::Status status =
      server_->stub().RankBatch(ClientContextFor(30, false).get(), empty, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("no queries"));

  std::vector<v1::RankRequest> many(kMaxBatchQueries + 1,
                                    WebQuery("q", {1.0f}));
  auto results = client_->RankBatch(many);
  EXPECT_EQ(results.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(results.status().message(),
              HasSubstr(std::to_string(kMaxBatchQueries + 1) +
                        " queries in one RankBatch request"));
  many.pop_back();
  EXPECT_TRUE(client_->RankBatch(many).ok());

  // 3 x 21 = 63 documents, each query within its own limit of 25.
  std::vector<v1::RankRequest> heavy(3,
                                     WebQuery("h", std::vector<float>(21, 1)));
  results = client_->RankBatch(heavy);
  EXPECT_EQ(results.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(results.status().message(),
              HasSubstr("63 documents over the queries of one RankBatch"));
  heavy.pop_back();
  EXPECT_TRUE(client_->RankBatch(heavy).ok());
}

TEST_F(RankBatchTest, EachQueryCountsAsARankInTheMetrics) {
  const std::string before = HttpGet(server_->metrics_port(), "/metrics");
  const std::string ok_news =
      "plrank_requests_total{code=\"OK\",method=\"Rank\",model=\"news\","
      "version=\"4\"}";
  const std::string bad_news =
      "plrank_requests_total{code=\"INVALID_ARGUMENT\",method=\"Rank\","
      "model=\"news\",version=\"4\"}";
  const std::string batch =
      "plrank_requests_total{code=\"OK\",method=\"RankBatch\",model="
      "\"news\",version=\"\"}";
  const std::string documents =
      "plrank_documents_per_request_sum{method=\"Rank\",model=\"news\"}";
  std::vector<v1::RankRequest> requests(3, WebQuery("n", {1.0f, 0.0f}));
  for (auto& request : requests) request.mutable_model_spec()->set_name("news");
  requests[2].clear_documents();  // INVALID_ARGUMENT, counted as such
  ASSERT_TRUE(client_->RankBatch(requests).ok());
  const std::string after = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_EQ(MetricValue(after, ok_news).value_or(0) -
                MetricValue(before, ok_news).value_or(0),
            2);
  EXPECT_EQ(MetricValue(after, bad_news).value_or(0) -
                MetricValue(before, bad_news).value_or(0),
            1);
  EXPECT_EQ(MetricValue(after, batch).value_or(0) -
                MetricValue(before, batch).value_or(0),
            1);
  EXPECT_EQ(MetricValue(after, documents).value_or(0) -
                MetricValue(before, documents).value_or(0),
            4);
  // Queries of several models: the batch is labelled _mixed.
  requests[2] = WebQuery("w", {1.0f});
  ASSERT_TRUE(client_->RankBatch(requests).ok());
  EXPECT_GE(MetricValue(HttpGet(server_->metrics_port(), "/metrics"),
                        "plrank_requests_total{code=\"OK\",method="
                        "\"RankBatch\",model=\"_mixed\",version=\"\"}")
                .value_or(0),
            1);
}

// plrank-client's output without the timing line.
std::string WithoutTiming(const std::string& text) {
  return std::regex_replace(text, std::regex(R"(documents in [0-9.]+ s)"),
                            "documents in T s");
}

TEST_F(RankBatchTest, ClientRankBatchPrintsAndWritesWhatRankDoes) {
  const std::string data = dir_->File("data.test");
  const std::string rank_scores = dir_->File("rank.scores");
  const std::string batch_scores = dir_->File("batch.scores");
  CommandResult rank = Client({"--model=demo", "rank", "--data=" + data,
                               "--top=3", "--scores_out=" + rank_scores});
  ASSERT_EQ(rank.exit_code, 0) << rank.err;
  for (const char* batch_size : {"1", "3"}) {
    CommandResult batch =
        Client({"--model=demo", "rank-batch", "--data=" + data, "--top=3",
                std::string("--batch_size=") + batch_size,
                "--scores_out=" + batch_scores});
    ASSERT_EQ(batch.exit_code, 0) << batch.err;
    EXPECT_EQ(WithoutTiming(batch.out),
              WithoutTiming(rank.out).replace(
                  WithoutTiming(rank.out).find(rank_scores), rank_scores.size(),
                  batch_scores));
    EXPECT_EQ(ReadWholeFile(batch_scores), ReadWholeFile(rank_scores));
  }
  CommandResult top = Client({"--model=demo", "rank-batch", "--data=" + data,
                              "--top=2", "--batch_size=4"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_THAT(top.out, HasSubstr("(demo v1)"));

  // Over the server's batch limit (12 test queries in one batch): the call
  // fails as a whole, clearly.
  CommandResult too_big = Client(
      {"--model=demo", "rank-batch", "--data=" + data, "--batch_size=100"});
  EXPECT_EQ(too_big.exit_code, 1);
  EXPECT_THAT(too_big.err, HasSubstr("RESOURCE_EXHAUSTED"));
  EXPECT_THAT(too_big.err, HasSubstr("queries in one RankBatch request"));
  CommandResult bad_flag = Client(
      {"--model=demo", "rank-batch", "--data=" + data, "--batch_size=0"});
  // A usage error of the client's own, not the server's.
  EXPECT_EQ(bad_flag.exit_code, 2);
  EXPECT_THAT(bad_flag.err,
              HasSubstr("plrank-client: error: --batch_size must be positive"));
  EXPECT_THAT(bad_flag.err, Not(HasSubstr("INVALID_ARGUMENT")));
}

}  // namespace
}  // namespace plrank
