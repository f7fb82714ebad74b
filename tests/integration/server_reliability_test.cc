// The real plrank-server over time (issue 10): a newer version that is
// incompatible with the serving one loads but does not take its traffic,
// and memory, status and metric series stay bounded over large requests and
// many reloads. Every wait polls an observable condition with a generous
// deadline.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "tests/testing/client_context.h"
#include "tests/testing/eventually.h"
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
using ::plrank::testing::TestEnsembleWithFeatures;
using ::testing::HasSubstr;
using ::testing::Not;

using ::plrank::testing::Eventually;

// Publishes version `version` of model "web" in one rename, as a deployment
// should: the server polls every 0.1 s and must never see the directory
// before its model is the final one (writing a default test model first and
// then replacing it once let a poll load the intermediate 4-feature model).
void WriteVersion(const std::string& base, int64_t version,
                  int32_t num_features) {
  const std::string staging = base + "/.staging-" + std::to_string(version);
  std::filesystem::create_directories(staging);
  ASSERT_TRUE(WriteModelFile(TestEnsembleWithFeatures(version, num_features),
                             staging + "/model.pb")
                  .ok());
  std::filesystem::create_directories(base + "/web");
  std::filesystem::rename(staging,
                          base + "/web/" + std::to_string(version));
}

v1::RankRequest DenseRequest(int docs, int features) {
  v1::RankRequest request;
  request.mutable_model_spec()->set_name("web");
  for (int i = 0; i < docs; ++i) {
    auto* dense = request.add_documents()->mutable_dense();
    for (int f = 0; f < features; ++f) {
      dense->add_values(0.001f * static_cast<float>((i + f) % 997));
    }
  }
  return request;
}

v1::ModelStatus Status(ServerProcess& server) {
  v1::GetModelStatusRequest request;
  request.set_name("web");
  v1::GetModelStatusResponse response;
  server.stub().GetModelStatus(ClientContextFor(120, true).get(), request, &response);
  return response.status();
}

const v1::VersionStatus* Find(const v1::ModelStatus& status, int64_t version) {
  for (const auto& v : status.versions()) {
    if (v.version() == version) return &v;
  }
  return nullptr;
}

// Issue 10 item 3: clients built for 4 features keep being served while a
// version trained on 5 features appears; it is loaded, pinnable, reported,
// and promoted only once the config allows it.
TEST(ServerReliabilityTest, IncompatibleVersionIsNotPromotedUnderLoad) {
  TempDir base;
  const std::string config = base.File("models.config");
  std::ofstream(config) << "models { name: 'web' }";
  WriteVersion(base.path(), 1, 4);
  ServerProcess server({"--model_base_path=" + base.path(),
                        "--model_config_file=" + config,
                        "--poll_interval_seconds=0.1"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  ASSERT_TRUE(Eventually([&] { return Status(server).default_version() == 1; }));

  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::map<int64_t, int> served;  // version -> OK responses
  std::string errors;
  std::vector<std::thread> clients;
  for (int t = 0; t < 2; ++t) {
    clients.emplace_back([&] {
      const v1::RankRequest request = DenseRequest(50, 4);
      while (!stop.load()) {
        v1::RankResponse response;
        grpc::Status status =
            server.stub().Rank(ClientContextFor(120, true).get(), request, &response);
        std::lock_guard<std::mutex> lock(mutex);
        if (status.ok()) {
          ++served[response.model_version()];
        } else {
          errors += status.error_message() + "\n";
        }
      }
    });
  }
  auto answered = [&] {
    std::lock_guard<std::mutex> lock(mutex);
    int total = 0;
    for (const auto& [version, count] : served) total += count;
    return total;
  };
  ASSERT_TRUE(Eventually([&] { return answered() > 20; }));
  WriteVersion(base.path(), 2, 5);  // picked up by polling
  ASSERT_TRUE(Eventually([&] {
    // Find points into `status`, which must outlive v2.
    const v1::ModelStatus status = Status(server);
    const v1::VersionStatus* v2 = Find(status, 2);
    return v2 != nullptr && v2->state() == v1::VERSION_STATE_AVAILABLE;
  })) << server.stderr_text();
  const int answered_then = answered();
  ASSERT_TRUE(Eventually([&] { return answered() >= answered_then + 50; }));
  stop = true;
  for (auto& client : clients) client.join();
  EXPECT_EQ(errors, "");
  EXPECT_EQ(served.size(), 1u);  // version 1 only

  const v1::ModelStatus status = Status(server);
  EXPECT_EQ(status.default_version(), 1);
  ASSERT_NE(Find(status, 2), nullptr);
  EXPECT_THAT(Find(status, 2)->promotion_refused(),
              HasSubstr("it takes 5 features per document, the serving "
                        "version 4"));
  EXPECT_THAT(Find(status, 2)->promotion_refused(),
              Not(HasSubstr("--num_features")));
  EXPECT_EQ(Find(status, 2)->metadata().score_transform(), "identity");
  EXPECT_THAT(server.stderr_text(),
              HasSubstr("event=promotion_refused model=web version=2"));
  const plrank::testing::CommandResult cli = plrank::testing::RunCommand(
      {plrank::testing::BinPath("plrank-client"), "--target=" + server.target(),
       "--model=web", "status"});
  EXPECT_THAT(cli.out, HasSubstr("default version 1"));
  EXPECT_THAT(cli.out, HasSubstr("    not promoted to default: incompatible "
                                 "with version 1 serving now"));
  EXPECT_EQ(MetricValue(HttpGet(server.metrics_port(), "/metrics"),
                        "plrank_model_promotions_refused_total{model=\"web\","
                        "reason=\"num_features\"}"),
            1);
  // Pinned, the new version serves.
  v1::RankRequest pinned = DenseRequest(3, 5);
  pinned.mutable_model_spec()->set_version(2);
  v1::RankResponse response;
  ASSERT_TRUE(server.stub().Rank(ClientContextFor(120, true).get(), pinned, &response).ok());
  EXPECT_EQ(response.model_version(), 2);

  // The operator accepts the change: the default moves at the next poll, and
  // old clients get a message about documents, not about trainer flags.
  std::ofstream(config) << "models { name: 'web' "
                           "allow_incompatible_promotion: true }";
  ASSERT_TRUE(Eventually([&] { return Status(server).default_version() == 2; }));
  grpc::Status old_client =
      server.stub().Rank(ClientContextFor(120, true).get(), DenseRequest(3, 4), &response);
  EXPECT_EQ(old_client.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(old_client.error_message(),
              HasSubstr("4 dense features, the model expects 5"));
  EXPECT_THAT(old_client.error_message(), Not(HasSubstr("--num_features")));
}

// Issue 10 item 8: resident memory returns near its starting point after
// large requests; status and per-version metric series stay bounded over
// many reloads.
TEST(ServerReliabilityTest, MemoryStatusAndMetricsStayBounded) {
  constexpr int kFeatures = 200;
  TempDir base;
  WriteVersion(base.path(), 1, kFeatures);
  ServerProcess server({"--model_base_path=" + base.path(),
                        "--poll_interval_seconds=0"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  // ReloadModels returns once the startup scan (and its own) is done.
  v1::ReloadModelsResponse loaded;
  ASSERT_TRUE(server.stub()
                  .ReloadModels(ClientContextFor(120, true).get(), v1::ReloadModelsRequest(),
                                &loaded)
                  .ok());
  v1::RankResponse response;
  ASSERT_TRUE(server.stub()
                  .Rank(ClientContextFor(120, true).get(), DenseRequest(10, kFeatures), &response)
                  .ok());
  const int64_t start = server.ResidentBytes();
  ASSERT_GT(start, 0);

  // 4 clients x 3 requests of 10,000 documents x 200 features (8 MB each).
  std::vector<std::thread> clients;
  std::atomic<int> failed{0};
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&] {
      const v1::RankRequest request = DenseRequest(10000, kFeatures);
      for (int i = 0; i < 3; ++i) {
        v1::RankResponse large;
        if (!server.stub().Rank(ClientContextFor(120, true).get(), request, &large).ok()) {
          ++failed;
        }
      }
    });
  }
  for (auto& client : clients) client.join();
  EXPECT_EQ(failed.load(), 0);
  const int64_t peak = server.ResidentBytes();
  const int64_t bound = start + (int64_t{24} << 20);
  EXPECT_TRUE(Eventually([&] { return server.ResidentBytes() < bound; }))
      << "resident " << server.ResidentBytes() << " bytes, started at "
      << start << ", peak seen " << peak;

  // 40 more versions, each served once and reloaded.
  for (int v = 2; v <= 41; ++v) {
    WriteVersion(base.path(), v, kFeatures);
    v1::ReloadModelsResponse reload;
    ASSERT_TRUE(server.stub()
                    .ReloadModels(ClientContextFor(120, true).get(), v1::ReloadModelsRequest(),
                                  &reload)
                    .ok());
    ASSERT_TRUE(server.stub()
                    .Rank(ClientContextFor(120, true).get(), DenseRequest(2, kFeatures),
                          &response)
                    .ok());
    ASSERT_EQ(response.model_version(), v);
  }
  const v1::ModelStatus status = Status(server);
  EXPECT_EQ(status.versions_size(), 2 + 4);  // latest 2 + 4 retired
  const std::string metrics = HttpGet(server.metrics_port(), "/metrics");
  EXPECT_EQ(MetricValue(metrics,
                        "plrank_requests_total{code=\"OK\",method=\"Rank\","
                        "model=\"web\",version=\"41\"}"),
            1);
  EXPECT_THAT(metrics, Not(HasSubstr("version=\"30\"")));
  EXPECT_THAT(metrics, Not(HasSubstr("version=\"1\"")));
  EXPECT_THAT(metrics, HasSubstr("version=\"40\""));
}

}  // namespace
}  // namespace plrank
