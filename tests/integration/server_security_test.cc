// plrank-server's security defaults, checked on the real binary: where it
// listens (every listening socket, read from /proc), what its client-visible
// errors reveal, and Evaluate's label bounds (no NaN in any response).
// Admin RPCs from a non-loopback peer: server_admin_access_test.cc.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "tests/testing/client_context.h"
#include "tests/testing/eventually.h"
#include "tests/testing/listening_sockets.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank {
namespace {

using ::plrank::testing::ClientContextFor;
using ::plrank::testing::ListeningSockets;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::plrank::testing::WriteRawModelFile;
using ::plrank::testing::WriteTestModel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Port(int port) { return ":" + std::to_string(port); }

// Flag values it cannot honour stop the server before it binds anything,
// with the flag named (--port=70000 used to bind port 4464).
TEST(ServerSecurityTest, RefusesFlagValuesItCannotHonour) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  for (const std::string& flag :
       {std::string("--port=70000"), std::string("--poll_interval_seconds=nan"),
        std::string("--max_message_bytes=0")}) {
    const plrank::testing::CommandResult run = plrank::testing::RunCommand(
        {"/usr/bin/timeout", "30", plrank::testing::BinPath("plrank-server"),
         "--model_base_path=" + base.path(), "--metrics_port=0", flag});
    EXPECT_EQ(run.exit_code, 1) << flag << ": " << run.err << run.out;
    EXPECT_THAT(run.err, HasSubstr("plrank-server: --" +
                                   flag.substr(2, flag.find('=') - 2)))
        << flag;
    EXPECT_THAT(run.out, Not(HasSubstr("listening on"))) << flag;
  }
}

// With --port=0 the server announces its port; that socket and /metrics
// must be all it listens on (gRPC's per-queue listener clones used to bind
// further random ports), and /metrics stays on loopback when gRPC is
// exposed on every interface.
TEST(ServerSecurityTest, ListensOnlyOnTheAnnouncedSockets) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  ServerProcess server({"--model_base_path=" + base.path(), "--host=0.0.0.0"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  EXPECT_THAT(server.stdout_text(),
              HasSubstr("listening on 0.0.0.0" + Port(server.port())));
  EXPECT_THAT(server.stdout_text(),
              HasSubstr("metrics on 127.0.0.1" + Port(server.metrics_port())));
  // gRPC's wildcard socket is dual-stack ("::").
  EXPECT_THAT(ListeningSockets(server.pid()),
              ElementsAre("127.0.0.1" + Port(server.metrics_port()),
                          "::" + Port(server.port())));
}

// Without --host / --metrics_host both stay on this machine; deployments
// say 0.0.0.0 explicitly (deploy/).
TEST(ServerSecurityTest, DefaultsListenOnLoopbackOnly) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  ServerProcess server({"--model_base_path=" + base.path()},
                       /*server_default_host=*/true);
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  EXPECT_THAT(server.stdout_text(),
              HasSubstr("listening on 127.0.0.1" + Port(server.port())));
  // gRPC listens on an IPv6 socket with the mapped IPv4 loopback address.
  const std::vector<std::string> sockets = ListeningSockets(server.pid());
  ASSERT_EQ(sockets.size(), 2u) << ::testing::PrintToString(sockets);
  EXPECT_EQ(sockets[0], "127.0.0.1" + Port(server.metrics_port()));
  EXPECT_THAT(sockets[1], ::testing::AnyOf(
                              "127.0.0.1" + Port(server.port()),
                              "::ffff:127.0.0.1" + Port(server.port())));
}

class ClientErrorsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = new TempDir;
    WriteTestModel(base_->path(), "web", 1);
    WriteRawModelFile(base_->path(), "web", 2, "not a model");
    WriteTestModel(base_->path(), "secret-model", 1);
    server_ = new ServerProcess({"--model_base_path=" + base_->path(),
                                 "--poll_interval_seconds=0"});
    ASSERT_TRUE(server_->ok()) << server_->stderr_text();
    // The server listens before its first scan has loaded the models: poll
    // until version 1 answers (the deadline only bounds a failing run).
    ::plrank::testing::Eventually([] { return Rank("web", 1).ok(); });
  }
  static void TearDownTestSuite() {
    delete server_;
    delete base_;
  }

  static grpc::Status Rank(const std::string& model, int64_t version) {
    v1::RankRequest request;
    request.mutable_model_spec()->set_name(model);
    request.mutable_model_spec()->set_version(version);
    for (int d = 0; d < 2; ++d) {
      v1::Document* document = request.add_documents();
      for (int f = 0; f < ::plrank::testing::kTestModelFeatures; ++f) {
        document->mutable_dense()->add_values(0.5f);
      }
    }
    v1::RankResponse response;
    return server_->stub().Rank(ClientContextFor(10, true).get(), request, &response);
  }

  // Scores documents whose x1 grows with their position, so every query
  // has a defined ranking.
  static v1::LabelledQuery Query(const std::vector<int32_t>& labels) {
    v1::LabelledQuery query;
    query.set_query_id("q");
    for (size_t d = 0; d < labels.size(); ++d) {
      v1::Document* document = query.add_documents();
      for (int f = 0; f < ::plrank::testing::kTestModelFeatures; ++f) {
        document->mutable_dense()->add_values(f == 1 ? static_cast<float>(d)
                                                     : 0.0f);
      }
      query.add_labels(labels[d]);
    }
    return query;
  }

  static grpc::Status Evaluate(const std::vector<v1::LabelledQuery>& queries,
                               bool skip_empty_queries,
                               v1::EvaluateResponse* response) {
    v1::EvaluateRequest request;
    request.mutable_model_spec()->set_name("web");
    request.set_skip_empty_queries(skip_empty_queries);
    request.set_per_query(true);
    for (const v1::LabelledQuery& query : queries) *request.add_queries() = query;
    return server_->stub().Evaluate(ClientContextFor(10, true).get(), request, response);
  }

  static TempDir* base_;
  static ServerProcess* server_;
};

TempDir* ClientErrorsTest::base_ = nullptr;
ServerProcess* ClientErrorsTest::server_ = nullptr;

// A ranking client learns nothing about other models or the server's files.
TEST_F(ClientErrorsTest, NameNoOtherModelAndNoFile) {
  ASSERT_TRUE(Rank("web", 1).ok());
  const grpc::Status unknown = Rank("nope", 0);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(unknown.error_message(), "unknown model 'nope'");

  const grpc::Status failed = Rank("web", 2);
  EXPECT_EQ(failed.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(failed.error_message(), HasSubstr("version 2 of model 'web' "
                                                "failed to load"));
  EXPECT_THAT(failed.error_message(), Not(HasSubstr(base_->path())));
  EXPECT_THAT(failed.error_message(), Not(HasSubstr("model.pb")));

  // The admin's view (loopback here) keeps the load error with its file.
  v1::GetModelStatusRequest request;
  request.set_name("web");
  v1::GetModelStatusResponse status;
  ASSERT_TRUE(
      server_->stub().GetModelStatus(ClientContextFor(10, true).get(), request, &status).ok());
  bool found = false;
  for (const v1::VersionStatus& version : status.status().versions()) {
    if (version.version() != 2) continue;
    found = true;
    EXPECT_THAT(version.error(), HasSubstr("web/2/model.pb"));
  }
  EXPECT_TRUE(found);
}

// Labels above 31 (the CLIs' limit) used to be accepted and turn every
// metric into NaN; they are INVALID_ARGUMENT naming the document.
TEST_F(ClientErrorsTest, EvaluateRejectsLabelsAboveTheLimit) {
  for (const int32_t label : {32, 2147483647, -1}) {
    v1::EvaluateResponse response;
    const grpc::Status status =
        Evaluate({Query({1, 0, 2}), Query({0, 1, label})}, false, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << label;
    EXPECT_THAT(status.error_message(),
                HasSubstr("query 1 ('q') document 2: label " +
                          std::to_string(label) + " outside 0..31"));
  }
  // The same through a stream, in its second message.
  v1::EvaluateResponse streamed;
  auto context = ClientContextFor(10, true);
  auto writer = server_->stub().EvaluateStream(context.get(), &streamed);
  v1::EvaluateRequest first;
  first.mutable_model_spec()->set_name("web");
  *first.add_queries() = Query({1, 0});
  ASSERT_TRUE(writer->Write(first));
  v1::EvaluateRequest second;
  *second.add_queries() = Query({0, 2147483647});
  writer->Write(second);  // the server may already have failed the stream
  writer->WritesDone();
  const grpc::Status status = writer->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("document 1: label"));

  // 31 itself is a valid grade, and every value is finite.
  v1::EvaluateResponse response;
  ASSERT_TRUE(Evaluate({Query({31, 0, 3}), Query({0, 1, 0})}, false,
                       &response)
                  .ok());
  ASSERT_EQ(response.metrics_size(), 6);
  for (const v1::MetricValue& metric : response.metrics()) {
    EXPECT_TRUE(std::isfinite(metric.value())) << metric.name();
  }
  for (const v1::QueryMetrics& query : response.per_query()) {
    for (const v1::MetricValue& metric : query.metrics()) {
      EXPECT_TRUE(std::isfinite(metric.value())) << metric.name();
    }
  }
}

// With skip_empty_queries and no relevant document anywhere, no query is
// left to average: an error, not a response full of NaN.
TEST_F(ClientErrorsTest, EvaluateNeverAnswersNaN) {
  v1::EvaluateResponse response;
  const grpc::Status status =
      Evaluate({Query({0, 0}), Query({0, 0, 0})}, true, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("skip_empty_queries"));
  for (const v1::MetricValue& metric : response.metrics()) {
    EXPECT_FALSE(std::isnan(metric.value())) << metric.name();
  }
  // One relevant document is enough.
  ASSERT_TRUE(
      Evaluate({Query({0, 0}), Query({0, 1, 0})}, true, &response).ok());
  for (const v1::MetricValue& metric : response.metrics()) {
    EXPECT_TRUE(std::isfinite(metric.value())) << metric.name();
  }
}

}  // namespace
}  // namespace plrank
