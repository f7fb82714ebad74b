// The real plrank-server binary: Rank / Evaluate / status RPCs, the status
// code of every bad request kind, and /metrics.

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

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
using ::plrank::testing::HttpGet;
using ::plrank::testing::MetricValue;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::plrank::testing::TestModelScore;
using ::plrank::testing::WriteRawModelFile;
using ::plrank::testing::WriteTestModel;
using ::testing::HasSubstr;

void AddDense(google::protobuf::RepeatedPtrField<v1::Document>* documents,
              const std::string& id, std::vector<float> values) {
  v1::Document* doc = documents->Add();
  doc->set_id(id);
  for (float v : values) doc->mutable_dense()->add_values(v);
}

v1::RankRequest RankRequestFor(const std::string& model, int64_t version = 0,
                               const std::string& label = "") {
  v1::RankRequest request;
  request.mutable_model_spec()->set_name(model);
  request.mutable_model_spec()->set_version(version);
  request.mutable_model_spec()->set_version_label(label);
  request.set_query_id("q");
  AddDense(request.mutable_documents(), "a", {0.0f, 0.5f, 0, 0});
  AddDense(request.mutable_documents(), "b", {1.0f, 0.25f, 0, 0});
  return request;
}

class ServerApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = new TempDir;
    WriteTestModel(base_->path(), "web", 1);
    WriteTestModel(base_->path(), "web", 2);
    WriteRawModelFile(base_->path(), "web", 3, "not a model");
    WriteTestModel(base_->path(), "news", 5);
    server_ = new ServerProcess({"--model_base_path=" + base_->path(),
                                 "--max_documents_per_request=50",
                                 "--max_message_bytes=200000",
                                 "--poll_interval_seconds=0"});
    ASSERT_TRUE(server_->ok()) << server_->stderr_text();
    // Startup scans once; ReloadModels waits for that scan to finish.
    v1::ReloadModelsRequest request;
    v1::ReloadModelsResponse response;
    grpc::Status status =
        server_->stub().ReloadModels(ClientContextFor(10, true).get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message() << "\n"
                             << server_->stderr_text();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete base_;
  }

  static grpc::StatusCode RankCode(const v1::RankRequest& request,
                                   std::string* message = nullptr) {
    v1::RankResponse response;
    grpc::Status status =
        server_->stub().Rank(ClientContextFor(10, true).get(), request, &response);
    if (message != nullptr) *message = status.error_message();
    return status.error_code();
  }

  static TempDir* base_;
  static ServerProcess* server_;
};
TempDir* ServerApiTest::base_ = nullptr;
ServerProcess* ServerApiTest::server_ = nullptr;

TEST_F(ServerApiTest, RanksWithTheLatestOrPinnedVersion) {
  v1::RankResponse response;
  ASSERT_TRUE(server_->stub()
                  .Rank(ClientContextFor(10, true).get(), RankRequestFor("web"), &response)
                  .ok());
  EXPECT_EQ(response.model_name(), "web");
  EXPECT_EQ(response.model_version(), 2);  // 3 failed to load
  ASSERT_EQ(response.documents_size(), 2);
  EXPECT_EQ(response.documents(0).id(), "b");
  EXPECT_DOUBLE_EQ(response.documents(0).score(),
                   TestModelScore(2, 1.0f, 0.25f));
  EXPECT_EQ(response.documents(0).rank(), 1u);
  EXPECT_EQ(response.documents(0).request_index(), 1u);
  EXPECT_DOUBLE_EQ(response.documents(1).score(),
                   TestModelScore(2, 0.0f, 0.5f));

  response.Clear();
  ASSERT_TRUE(server_->stub()
                  .Rank(ClientContextFor(10, true).get(), RankRequestFor("web", 1), &response)
                  .ok());
  EXPECT_EQ(response.model_version(), 1);
  EXPECT_DOUBLE_EQ(response.documents(0).score(),
                   TestModelScore(1, 1.0f, 0.25f));

  // Sparse features and top_k.
  v1::RankRequest sparse;
  sparse.mutable_model_spec()->set_name("news");
  for (int i = 0; i < 10; ++i) {
    auto* features = sparse.add_documents()->mutable_sparse();
    features->add_indices(1);
    features->add_values(static_cast<float>(i));
  }
  sparse.set_top_k(2);
  response.Clear();
  ASSERT_TRUE(server_->stub().Rank(ClientContextFor(10, true).get(), sparse, &response).ok());
  ASSERT_EQ(response.documents_size(), 2);
  EXPECT_EQ(response.documents(0).request_index(), 9u);
  EXPECT_DOUBLE_EQ(response.documents(0).score(), TestModelScore(5, 0, 9));
}

TEST_F(ServerApiTest, EvaluatesInOneMessageAndAsAStream) {
  v1::EvaluateRequest request;
  request.mutable_model_spec()->set_name("web");
  request.set_per_query(true);
  for (int q = 0; q < 3; ++q) {
    v1::LabelledQuery* query = request.add_queries();
    query->set_query_id("q" + std::to_string(q));
    // Higher x1 -> higher score; labels agree, so every metric is perfect.
    for (int d = 0; d < 4; ++d) {
      AddDense(query->mutable_documents(), "", {0, static_cast<float>(d), 0, 0});
      query->add_labels(d);
    }
  }
  v1::EvaluateResponse response;
  ASSERT_TRUE(server_->stub()
                  .Evaluate(ClientContextFor(10, true).get(), request, &response)
                  .ok());
  EXPECT_EQ(response.model_version(), 2);
  EXPECT_EQ(response.query_count(), 3u);
  EXPECT_EQ(response.document_count(), 12u);
  ASSERT_EQ(response.metrics_size(), 6);
  for (const auto& metric : response.metrics()) {
    if (metric.name().rfind("ndcg", 0) == 0 || metric.name() == "map") {
      EXPECT_DOUBLE_EQ(metric.value(), 1.0) << metric.name();
    }
  }
  EXPECT_EQ(response.per_query_size(), 3);

  // The same queries, one per message.
  v1::EvaluateResponse streamed;
  auto context = ClientContextFor(10, true);
  auto writer = server_->stub().EvaluateStream(context.get(), &streamed);
  for (int q = 0; q < 3; ++q) {
    v1::EvaluateRequest message;
    if (q == 0) {
      *message.mutable_model_spec() = request.model_spec();
      message.set_per_query(true);
    }
    *message.add_queries() = request.queries(q);
    ASSERT_TRUE(writer->Write(message));
  }
  writer->WritesDone();
  ASSERT_TRUE(writer->Finish().ok());
  EXPECT_EQ(streamed.query_count(), 3u);
  ASSERT_EQ(streamed.metrics_size(), response.metrics_size());
  for (int m = 0; m < streamed.metrics_size(); ++m) {
    EXPECT_EQ(streamed.metrics(m).name(), response.metrics(m).name());
    EXPECT_DOUBLE_EQ(streamed.metrics(m).value(), response.metrics(m).value());
  }

  // Labels that do not match the documents.
  request.mutable_queries(1)->add_labels(1);
  EXPECT_EQ(server_->stub()
                .Evaluate(ClientContextFor(10, true).get(), request, &response)
                .error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ServerApiTest, StatusAndList) {
  v1::GetModelStatusRequest request;
  request.set_name("web");
  v1::GetModelStatusResponse response;
  ASSERT_TRUE(server_->stub()
                  .GetModelStatus(ClientContextFor(10, true).get(), request, &response)
                  .ok());
  EXPECT_EQ(response.status().default_version(), 2);
  std::map<int64_t, v1::VersionStatus> versions;
  for (const auto& v : response.status().versions()) versions[v.version()] = v;
  ASSERT_EQ(versions.count(3), 1u);
  EXPECT_EQ(versions[3].state(), v1::VERSION_STATE_FAILED);
  EXPECT_THAT(versions[3].error(), HasSubstr("web/3/model.pb"));
  EXPECT_EQ(versions[2].state(), v1::VERSION_STATE_AVAILABLE);
  EXPECT_EQ(versions[2].metadata().num_features(), 4u);
  EXPECT_EQ(versions[1].state(), v1::VERSION_STATE_AVAILABLE);
  EXPECT_GT(versions[2].loaded_unix_seconds(), 1600000000);

  request.set_name("nope");
  EXPECT_EQ(server_->stub()
                .GetModelStatus(ClientContextFor(10, true).get(), request, &response)
                .error_code(),
            grpc::StatusCode::NOT_FOUND);

  v1::ListModelsResponse list;
  ASSERT_TRUE(server_->stub()
                  .ListModels(ClientContextFor(10, true).get(), v1::ListModelsRequest(), &list)
                  .ok());
  ASSERT_EQ(list.models_size(), 2);
  EXPECT_EQ(list.models(0).name(), "news");
  EXPECT_EQ(list.models(1).name(), "web");
}

TEST_F(ServerApiTest, EveryBadRequestKindGetsItsCode) {
  using grpc::StatusCode;
  std::string message;
  v1::RankRequest empty = RankRequestFor("web");
  empty.clear_documents();
  EXPECT_EQ(RankCode(empty), StatusCode::INVALID_ARGUMENT);

  v1::RankRequest too_many = RankRequestFor("web");
  for (int i = 0; i < 60; ++i) {
    AddDense(too_many.mutable_documents(), "x", {0, 0, 0, 0});
  }
  EXPECT_EQ(RankCode(too_many, &message), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(message, HasSubstr("at most 50"));

  v1::RankRequest wrong_count = RankRequestFor("web");
  AddDense(wrong_count.mutable_documents(), "c", {0, 0, 0});
  EXPECT_EQ(RankCode(wrong_count, &message), StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(message, HasSubstr("expects 4"));

  v1::RankRequest infinite = RankRequestFor("web");
  AddDense(infinite.mutable_documents(), "c",
           {0, -std::numeric_limits<float>::infinity(), 0, 0});
  EXPECT_EQ(RankCode(infinite), StatusCode::INVALID_ARGUMENT);

  v1::RankRequest nan = RankRequestFor("web");
  AddDense(nan.mutable_documents(), "c",
           {std::numeric_limits<float>::quiet_NaN(), 0, 0, 0});
  EXPECT_EQ(RankCode(nan), StatusCode::OK);  // NaN = missing

  v1::RankRequest bad_sparse = RankRequestFor("web");
  auto* sparse = bad_sparse.add_documents()->mutable_sparse();
  sparse->add_indices(7);
  sparse->add_values(1);
  EXPECT_EQ(RankCode(bad_sparse), StatusCode::INVALID_ARGUMENT);

  EXPECT_EQ(RankCode(RankRequestFor("nope")), StatusCode::NOT_FOUND);
  EXPECT_EQ(RankCode(RankRequestFor("web", 9)), StatusCode::NOT_FOUND);
  EXPECT_EQ(RankCode(RankRequestFor("web", 0, "stable")),
            StatusCode::NOT_FOUND);
  EXPECT_EQ(RankCode(RankRequestFor("web", 3), &message),
            StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(message, HasSubstr("failed to load"));

  v1::RankRequest huge = RankRequestFor("web");
  huge.set_query_id(std::string(300000, 'q'));
  EXPECT_EQ(RankCode(huge), StatusCode::RESOURCE_EXHAUSTED);

  v1::RankResponse response;
  grpc::ClientContext expired;
  expired.set_deadline(std::chrono::system_clock::now() -
                       std::chrono::seconds(1));
  EXPECT_EQ(server_->stub()
                .Rank(&expired, RankRequestFor("web"), &response)
                .error_code(),
            StatusCode::DEADLINE_EXCEEDED);
}

TEST_F(ServerApiTest, ExposesPrometheusMetrics) {
  for (int i = 0; i < 3; ++i) {
    v1::RankResponse response;
    ASSERT_TRUE(server_->stub()
                    .Rank(ClientContextFor(10, true).get(), RankRequestFor("news"), &response)
                    .ok());
  }
  RankCode(RankRequestFor("no-such-model"));
  const std::string metrics = HttpGet(server_->metrics_port(), "/metrics");
  ASSERT_FALSE(metrics.empty());
  EXPECT_GE(MetricValue(metrics,
                        "plrank_requests_total{code=\"OK\",method=\"Rank\","
                        "model=\"news\",version=\"5\"}")
                .value_or(-1),
            3);
  EXPECT_GE(MetricValue(metrics,
                        "plrank_requests_total{code=\"NOT_FOUND\",method="
                        "\"Rank\",model=\"_unknown\",version=\"\"}")
                .value_or(-1),
            1);
  EXPECT_GE(MetricValue(metrics,
                        "plrank_request_duration_seconds_count{method="
                        "\"Rank\",model=\"news\"}")
                .value_or(-1),
            3);
  EXPECT_GE(MetricValue(metrics,
                        "plrank_scoring_duration_seconds_count{model="
                        "\"news\",version=\"5\"}")
                .value_or(-1),
            3);
  EXPECT_GE(MetricValue(metrics,
                        "plrank_documents_per_request_sum{method=\"Rank\","
                        "model=\"news\"}")
                .value_or(-1),
            6);
  EXPECT_EQ(MetricValue(metrics, "plrank_model_versions_loaded{model=\"web\"}"),
            2);
  EXPECT_EQ(
      MetricValue(metrics, "plrank_model_versions_loaded{model=\"news\"}"), 1);
  EXPECT_EQ(MetricValue(metrics,
                        "plrank_model_loads_total{model=\"web\",result="
                        "\"failure\"}"),
            1);
  EXPECT_EQ(MetricValue(metrics,
                        "plrank_model_loads_total{model=\"web\",result="
                        "\"success\"}"),
            2);
  EXPECT_GE(MetricValue(metrics,
                        "plrank_model_load_duration_seconds_count{model="
                        "\"web\"}")
                .value_or(-1),
            2);
  EXPECT_EQ(MetricValue(metrics,
                        "plrank_model_version_created_timestamp_seconds{"
                        "model=\"web\",version=\"2\"}"),
            1700000000);
  EXPECT_THAT(metrics, HasSubstr("plrank_model_version_info{checksum=\""));
  EXPECT_THAT(metrics, HasSubstr("plrank_build_info{version=\""));
  EXPECT_THAT(metrics, HasSubstr("# TYPE plrank_request_duration_seconds "
                                 "histogram"));
  // Process metrics, read from /proc/self at scrape time.
  EXPECT_THAT(metrics, HasSubstr("# TYPE process_cpu_seconds_total counter"));
  EXPECT_GE(MetricValue(metrics, "process_cpu_seconds_total").value_or(-1), 0);
  EXPECT_GT(MetricValue(metrics, "process_resident_memory_bytes").value_or(-1),
            1 << 20);
  EXPECT_GT(MetricValue(metrics, "process_virtual_memory_bytes").value_or(-1),
            MetricValue(metrics, "process_resident_memory_bytes").value_or(0));
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  const double started =
      MetricValue(metrics, "process_start_time_seconds").value_or(-1);
  EXPECT_GT(started, now - 600);
  EXPECT_LE(started, now + 5);
  EXPECT_GE(MetricValue(metrics, "process_open_fds").value_or(-1), 3);
  EXPECT_GT(MetricValue(metrics, "process_max_fds").value_or(-1), 3);
}

}  // namespace
}  // namespace plrank
