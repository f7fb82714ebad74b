// RankingServer in-process (issue 40 item 5): Start / Shutdown / Wait with
// no signal involved, Reload as SIGHUP does, and a second Shutdown cutting
// the lame duck short. Every wait polls an observable state.

#include <chrono>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "grpcpp/grpcpp.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "server/ranking_server.h"
#include "tests/testing/eventually.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank::server {
namespace {

using ::plrank::testing::Eventually;
using ::plrank::testing::TempDir;

ServerOptions LoopbackOptions(const std::string& base) {
  ServerOptions options;
  options.model_base_path = base;
  options.port = 0;
  options.metrics_port = -1;
  options.poll_interval_seconds = 0;  // scans at start and on Reload only
  options.drain_seconds = 5;
  return options;
}

class Client {
 public:
  explicit Client(int port)
      : stub_(v1::Ranker::NewStub(grpc::CreateChannel(
            "127.0.0.1:" + std::to_string(port),
            grpc::InsecureChannelCredentials()))) {}

  // The version that answered a Rank of model "web", or -grpc code.
  int64_t RankedVersion() {
    v1::RankRequest request;
    request.mutable_model_spec()->set_name("web");
    auto* dense = request.add_documents()->mutable_dense();
    for (int f = 0; f < plrank::testing::kTestModelFeatures; ++f) {
      dense->add_values(0.5f);
    }
    v1::RankResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    const grpc::Status status = stub_->Rank(&context, request, &response);
    if (!status.ok()) return -static_cast<int64_t>(status.error_code());
    return response.model_version();
  }

 private:
  std::unique_ptr<v1::Ranker::Stub> stub_;
};

TEST(RankingServerTest, ServesInProcessAndShutsDownWithoutSignals) {
  TempDir base;
  ASSERT_NE(plrank::testing::WriteTestModel(base.path(), "web", 1), "");
  RankingServer server(LoopbackOptions(base.path()));
  ASSERT_TRUE(server.Start().ok());
  ASSERT_GT(server.port(), 0);
  EXPECT_EQ(server.metrics_port(), -1);
  Client client(server.port());
  ASSERT_TRUE(Eventually([&] { return client.RankedVersion() == 1; }));
  EXPECT_FALSE(server.IsShutDown());
  server.Shutdown("test");
  server.Wait();
  EXPECT_TRUE(server.IsShutDown());
  EXPECT_LT(client.RankedVersion(), 0);  // no longer listening
}

TEST(RankingServerTest, ReloadScansTheRepositoryWithoutWaiting) {
  TempDir base;
  ASSERT_NE(plrank::testing::WriteTestModel(base.path(), "web", 1), "");
  RankingServer server(LoopbackOptions(base.path()));
  ASSERT_TRUE(server.Start().ok());
  Client client(server.port());
  ASSERT_TRUE(Eventually([&] { return client.RankedVersion() == 1; }));
  ASSERT_NE(plrank::testing::WriteTestModel(base.path(), "web", 2), "");
  server.Reload("test");  // no polling: only this scan can find version 2
  EXPECT_TRUE(Eventually([&] { return client.RankedVersion() == 2; }));
}

TEST(RankingServerTest, SecondShutdownEndsTheLameDuck) {
  TempDir base;
  ASSERT_NE(plrank::testing::WriteTestModel(base.path(), "web", 1), "");
  ServerOptions options = LoopbackOptions(base.path());
  options.lame_duck_seconds = 3600;  // the test would time out waiting
  RankingServer server(options);
  ASSERT_TRUE(server.Start().ok());
  Client client(server.port());
  ASSERT_TRUE(Eventually([&] { return client.RankedVersion() == 1; }));
  server.Shutdown("first");
  EXPECT_EQ(client.RankedVersion(), 1);  // lame duck: still serving
  EXPECT_FALSE(server.IsShutDown());
  server.Shutdown("second");
  server.Wait();
  EXPECT_TRUE(server.IsShutDown());
}

TEST(RankingServerTest, StartFailsCleanlyAndWaitReturns) {
  ServerOptions options = LoopbackOptions("/nonexistent/plrank-models");
  RankingServer server(options);
  const absl::Status status = server.Start();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  server.Shutdown("unused");
  server.Wait();  // returns: nothing was started
}

}  // namespace
}  // namespace plrank::server
