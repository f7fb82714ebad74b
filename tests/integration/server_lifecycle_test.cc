// The real plrank-server binary over time: health transitions, versions
// added while clients run, broken versions, labels and pins from the config
// file, and graceful shutdown under load.

#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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
using ::plrank::testing::HealthCheck;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::plrank::testing::TestModelScore;
using ::plrank::testing::WriteRawModelFile;
using ::plrank::testing::WriteTestModel;
using ::testing::HasSubstr;

constexpr int kServing = 1;
constexpr int kNotServing = 2;

v1::RankRequest Request(const std::string& model, int num_docs,
                        int64_t version = 0, const std::string& label = "") {
  v1::RankRequest request;
  request.mutable_model_spec()->set_name(model);
  request.mutable_model_spec()->set_version(version);
  request.mutable_model_spec()->set_version_label(label);
  for (int i = 0; i < num_docs; ++i) {
    auto* dense = request.add_documents()->mutable_dense();
    for (float v : {static_cast<float>(i % 2), 0.001f * static_cast<float>(i),
                    0.0f, 0.0f}) {
      dense->add_values(v);
    }
  }
  return request;
}

// Version that serves `request`, or -<grpc code> on error.
int64_t RankVersion(ServerProcess& server, const v1::RankRequest& request) {
  v1::RankResponse response;
  grpc::Status status = server.stub().Rank(ClientContextFor(10, true).get(), request, &response);
  if (!status.ok()) return -static_cast<int64_t>(status.error_code());
  return response.model_version();
}

using ::plrank::testing::Eventually;

// Client threads sending Rank requests in a loop, counting outcomes.
class RankLoad {
 public:
  RankLoad(ServerProcess& server, int threads, int docs) {
    for (int t = 0; t < threads; ++t) {
      threads_.emplace_back([this, &server, docs] {
        const v1::RankRequest request = Request("web", docs);
        while (!stop_.load()) {
          v1::RankResponse response;
          grpc::Status status =
              server.stub().Rank(ClientContextFor(10, true).get(), request, &response);
          std::lock_guard<std::mutex> lock(mutex_);
          if (status.ok()) {
            ++versions_[response.model_version()];
            // Scores must come from the version the response names.
            const auto& top = response.documents(0);
            if (top.score() != TestModelScore(response.model_version(), 1.0f,
                                              0.001f * static_cast<float>(
                                                           top.request_index()))) {
              ++wrong_scores_;
            }
          } else {
            ++errors_[status.error_code()];
          }
        }
      });
    }
  }
  ~RankLoad() { Stop(); }
  void Stop() {
    stop_ = true;
    for (auto& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }
  std::map<int64_t, int> versions() {
    std::lock_guard<std::mutex> lock(mutex_);
    return versions_;
  }
  std::map<int, int> errors() {
    std::lock_guard<std::mutex> lock(mutex_);
    return errors_;
  }
  int wrong_scores() {
    std::lock_guard<std::mutex> lock(mutex_);
    return wrong_scores_;
  }
  // Requests answered so far, successful or not.
  int answered() {
    std::lock_guard<std::mutex> lock(mutex_);
    int total = 0;
    for (const auto& [version, count] : versions_) total += count;
    for (const auto& [code, count] : errors_) total += count;
    return total;
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::map<int64_t, int> versions_;
  std::map<int, int> errors_;
  int wrong_scores_ = 0;
};

TEST(ServerLifecycleTest, HealthFollowsModelAvailability) {
  TempDir base;
  ServerProcess server({"--model_base_path=" + base.path(),
                        "--poll_interval_seconds=0.1"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  EXPECT_EQ(HealthCheck(server.channel(), ""), kNotServing);
  EXPECT_EQ(HealthCheck(server.channel(), "plrank.v1.Ranker"), kNotServing);
  EXPECT_EQ(HealthCheck(server.channel(), "plrank.v1.Ranker/web"),
            -static_cast<int>(grpc::StatusCode::NOT_FOUND));
  // Alive while waiting for a first model: liveness probes must not restart.
  EXPECT_EQ(HealthCheck(server.channel(), "plrank.liveness"), kServing);
  EXPECT_EQ(RankVersion(server, Request("web", 2)),
            -static_cast<int64_t>(grpc::StatusCode::NOT_FOUND));

  // A model directory whose only version is still being written.
  std::filesystem::create_directories(base.path() + "/web/1");
  ASSERT_TRUE(Eventually([&] {
    return HealthCheck(server.channel(), "plrank.v1.Ranker/web") ==
           kNotServing;
  }));
  EXPECT_EQ(HealthCheck(server.channel(), ""), kNotServing);
  EXPECT_EQ(RankVersion(server, Request("web", 2)),
            -static_cast<int64_t>(grpc::StatusCode::UNAVAILABLE));

  WriteTestModel(base.path(), "web", 1);
  ASSERT_TRUE(Eventually([&] {
    return HealthCheck(server.channel(), "") == kServing;
  })) << server.stderr_text();
  EXPECT_EQ(HealthCheck(server.channel(), "plrank.v1.Ranker"), kServing);
  EXPECT_EQ(HealthCheck(server.channel(), "plrank.v1.Ranker/web"), kServing);
  EXPECT_EQ(RankVersion(server, Request("web", 2)), 1);

  std::filesystem::remove_all(base.path() + "/web");
  ASSERT_TRUE(Eventually([&] {
    return HealthCheck(server.channel(), "") == kNotServing;
  }));
  EXPECT_EQ(HealthCheck(server.channel(), "plrank.v1.Ranker/web"),
            kNotServing);
}

TEST(ServerLifecycleTest, NewVersionUnderLoadWithoutFailedRequests) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  ServerProcess server({"--model_base_path=" + base.path(),
                        "--poll_interval_seconds=0.1"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  ASSERT_TRUE(Eventually([&] {
    return RankVersion(server, Request("web", 1)) == 1;
  }));
  RankLoad load(server, 3, 200);
  // Traffic on version 1 first (observed, not assumed after a sleep).
  ASSERT_TRUE(Eventually([&] { return load.versions()[1] > 20; }));
  WriteTestModel(base.path(), "web", 2);  // picked up by polling
  ASSERT_TRUE(Eventually([&] { return load.versions()[2] > 20; }))
      << server.stderr_text();
  WriteTestModel(base.path(), "web", 3);  // picked up by ReloadModels
  v1::ReloadModelsResponse reload;
  ASSERT_TRUE(server.stub()
                  .ReloadModels(ClientContextFor(10, true).get(), v1::ReloadModelsRequest(),
                                &reload)
                  .ok());
  ASSERT_TRUE(Eventually([&] { return load.versions()[3] > 20; }));
  load.Stop();
  EXPECT_TRUE(load.errors().empty());
  EXPECT_EQ(load.wrong_scores(), 0);
  EXPECT_GT(load.versions()[1], 0);
  // Latest 2 by default: version 1 retired once 3 arrived.
  v1::GetModelStatusRequest status_request;
  status_request.set_name("web");
  v1::GetModelStatusResponse status;
  ASSERT_TRUE(server.stub()
                  .GetModelStatus(ClientContextFor(10, true).get(), status_request, &status)
                  .ok());
  std::map<int64_t, v1::VersionState> states;
  for (const auto& v : status.status().versions()) states[v.version()] = v.state();
  EXPECT_EQ(states[1], v1::VERSION_STATE_END);
  EXPECT_EQ(states[2], v1::VERSION_STATE_AVAILABLE);
  EXPECT_EQ(states[3], v1::VERSION_STATE_AVAILABLE);
  EXPECT_THAT(server.stderr_text(), HasSubstr("event=version_released"));
}

TEST(ServerLifecycleTest, BrokenVersionsStayFailedAndTheOldOneServes) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  ServerProcess server({"--model_base_path=" + base.path(),
                        "--poll_interval_seconds=0"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  v1::ReloadModelsResponse reload;
  ASSERT_TRUE(server.stub()
                  .ReloadModels(ClientContextFor(10, true).get(), v1::ReloadModelsRequest(),
                                &reload)
                  .ok());
  RankLoad load(server, 2, 20);
  WriteRawModelFile(base.path(), "web", 2, "corrupt bytes");
  auto bytes = SerializeModel(plrank::testing::TestEnsemble(3));
  ASSERT_TRUE(bytes.ok());
  WriteRawModelFile(base.path(), "web", 3, bytes->substr(0, bytes->size() - 9));
  std::filesystem::create_directories(base.path() + "/web/4");
  std::ofstream(base.path() + "/web/4/model.pb.tmp.1.x") << "in progress";
  for (int round = 0; round < 2; ++round) {
    reload.Clear();
    ASSERT_TRUE(server.stub()
                    .ReloadModels(ClientContextFor(10, true).get(), v1::ReloadModelsRequest(),
                                  &reload)
                    .ok());
    EXPECT_EQ(reload.failed(), round == 0 ? 2u : 0u);  // not retried
    EXPECT_EQ(reload.loaded(), 0u);
  }
  // Traffic answered after the broken versions were seen: at least 20
  // more requests, however long the busy machine takes.
  const int answered_before = load.answered();
  ASSERT_TRUE(Eventually([&] { return load.answered() >= answered_before + 20; }));
  load.Stop();
  EXPECT_TRUE(load.errors().empty());
  EXPECT_EQ(load.versions().size(), 1u);
  EXPECT_GT(load.versions()[1], 0);
  ASSERT_EQ(reload.models_size(), 1);
  std::map<int64_t, v1::VersionStatus> versions;
  for (const auto& v : reload.models(0).versions()) versions[v.version()] = v;
  EXPECT_EQ(versions.count(4), 0u);
  EXPECT_EQ(versions[2].state(), v1::VERSION_STATE_FAILED);
  EXPECT_EQ(versions[3].state(), v1::VERSION_STATE_FAILED);
  EXPECT_THAT(versions[3].error(), HasSubstr("web/3/model.pb"));
  EXPECT_EQ(reload.models(0).default_version(), 1);
  EXPECT_THAT(server.stderr_text(), HasSubstr("event=version_load_failed"));
}

TEST(ServerLifecycleTest, LabelsAndPinsFromTheConfigFile) {
  TempDir base;
  for (int v : {1, 2, 3}) WriteTestModel(base.path(), "web", v);
  const std::string config = base.File("models.config");
  std::ofstream(config) << R"pb(
    models {
      name: "web"
      version_policy { latest { num_versions: 1 } }
      version_labels { key: "stable" value: 1 }
      version_labels { key: "canary" value: 3 }
    })pb";
  ServerProcess server({"--model_base_path=" + base.path(),
                        "--model_config_file=" + config,
                        "--poll_interval_seconds=0"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  v1::ReloadModelsResponse reload;
  ASSERT_TRUE(server.stub()
                  .ReloadModels(ClientContextFor(10, true).get(), v1::ReloadModelsRequest(),
                                &reload)
                  .ok());
  EXPECT_EQ(RankVersion(server, Request("web", 3)), 3);
  EXPECT_EQ(RankVersion(server, Request("web", 3, 0, "stable")), 1);
  EXPECT_EQ(RankVersion(server, Request("web", 3, 0, "canary")), 3);
  EXPECT_EQ(RankVersion(server, Request("web", 3, 1)), 1);
  EXPECT_EQ(RankVersion(server, Request("web", 3, 2)),
            -static_cast<int64_t>(grpc::StatusCode::NOT_FOUND));
  EXPECT_EQ(RankVersion(server, Request("web", 3, 0, "beta")),
            -static_cast<int64_t>(grpc::StatusCode::NOT_FOUND));

  // Promote: stable moves to 3; version 1 is no longer needed.
  std::ofstream(config) << R"pb(
    models {
      name: "web"
      version_policy { latest { num_versions: 1 } }
      version_labels { key: "stable" value: 3 }
    })pb";
  ASSERT_TRUE(server.stub()
                  .ReloadModels(ClientContextFor(10, true).get(), v1::ReloadModelsRequest(),
                                &reload)
                  .ok());
  EXPECT_EQ(reload.unloaded(), 1u);
  EXPECT_EQ(RankVersion(server, Request("web", 3, 0, "stable")), 3);
  EXPECT_EQ(RankVersion(server, Request("web", 3, 1)),
            -static_cast<int64_t>(grpc::StatusCode::NOT_FOUND));
}

// SIGTERM under load: health turns NOT_SERVING at once, the lame-duck
// period still answers requests, a second signal ends it, and requests in
// flight drain without errors. Every step waits on something observable;
// the lame duck and drain are long enough for a busy machine, and the second
// signal (not a timer) ends the lame duck.
TEST(ServerLifecycleTest, SigtermUnderLoadDrainsWithoutErrors) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  ServerProcess server({"--model_base_path=" + base.path(),
                        "--poll_interval_seconds=0", "--drain_seconds=120",
                        "--lame_duck_seconds=600"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  ASSERT_TRUE(Eventually([&] {
    return RankVersion(server, Request("web", 1)) == 1;
  }));
  using Clock = std::chrono::steady_clock;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> kill_time{std::numeric_limits<int64_t>::max()};
  std::atomic<int> ok_before{0};
  std::atomic<int> ok_after{0};
  std::mutex mutex;
  std::string errors_before;  // requests sent before SIGTERM must succeed
  std::string bad_after;      // later ones: OK, or refused by the shutdown
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&] {
      const v1::RankRequest request = Request("web", 3000);
      while (!stop.load()) {
        const int64_t sent = Clock::now().time_since_epoch().count();
        v1::RankResponse response;
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::seconds(120));
        grpc::Status status = server.stub().Rank(&context, request, &response);
        const bool before = sent < kill_time.load();
        if (status.ok()) {
          ++(before ? ok_before : ok_after);
          continue;
        }
        std::lock_guard<std::mutex> lock(mutex);
        const std::string what = std::to_string(status.error_code()) + " " +
                                  status.error_message() + "\n";
        if (before) {
          errors_before += what;
        } else if (status.error_code() != grpc::StatusCode::UNAVAILABLE &&
                   status.error_code() != grpc::StatusCode::CANCELLED) {
          bad_after += what;
        }
      }
    });
  }
  ASSERT_TRUE(Eventually([&] { return ok_before.load() > 20; }));
  kill_time = Clock::now().time_since_epoch().count();
  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  // Lame duck: not serving for health checks, still answering requests.
  EXPECT_TRUE(Eventually([&] {
    return HealthCheck(server.channel(), "") == kNotServing;
  }));
  EXPECT_TRUE(Eventually([&] { return ok_after.load() > 0; }));
  // The second signal ends the lame duck; then the drain.
  const std::optional<int> exit_code =
      server.Stop(SIGTERM, std::chrono::seconds(300));
  stop = true;
  for (auto& client : clients) client.join();
  ASSERT_TRUE(exit_code.has_value());
  EXPECT_EQ(*exit_code, 0) << server.stderr_text();
  EXPECT_EQ(errors_before, "");
  EXPECT_EQ(bad_after, "");
  const std::string log = server.stderr_text();
  EXPECT_THAT(log, HasSubstr("event=shutdown_complete"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("event=drain_timeout")));
}

}  // namespace
}  // namespace plrank
