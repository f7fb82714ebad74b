// Shadow scoring end to end: the real plrank-server over loopback gRPC with
// a model repository of several versions and a config naming a shadow.
// Answers must come from the serving version; copies are scored off the
// request path, so the tests wait (with a deadline) for the counters that
// GetModelStatus and /metrics report, never for a fixed time.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/model/model_io.h"
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
using ::plrank::testing::Eventually;
using ::plrank::testing::HttpGet;
using ::plrank::testing::MetricValue;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::plrank::testing::TestEnsemble;
using ::plrank::testing::WriteTestModel;
using ::testing::DoubleNear;
using ::testing::HasSubstr;
using ::testing::Not;

// x0 alternates 0/1, x1 grows with the index: version 1 ranks the odd
// documents first, by descending index.
v1::RankRequest Request(int num_docs, const std::string& label = "") {
  v1::RankRequest request;
  request.mutable_model_spec()->set_name("web");
  request.mutable_model_spec()->set_version_label(label);
  for (int i = 0; i < num_docs; ++i) {
    v1::Document* document = request.add_documents();
    document->set_id(absl::StrCat("d", i));
    for (float v : {static_cast<float>(i % 2), 0.001f * static_cast<float>(i),
                    0.0f, 0.0f}) {
      document->mutable_dense()->add_values(v);
    }
  }
  return request;
}

// The repository: web/1 and web/2 hold the same model; web/3 reverses the
// order on x1 (a different model).
class ShadowScoringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(WriteTestModel(base_.path(), "web", 1).empty());
    ASSERT_FALSE(WriteTestModel(base_.path(), "web", 2, /*tag=*/1).empty());
    Ensemble reversed = TestEnsemble(3);
    reversed.linear_weights[1] = -1.0;
    std::filesystem::create_directories(base_.path() + "/web/3");
    ASSERT_TRUE(
        WriteModelFile(reversed, base_.path() + "/web/3/model.pb").ok());
  }

  // Starts the server with `config` as its model config.
  void Start(const std::string& config,
             std::vector<std::string> flags = {}) {
    const std::string path = base_.File("models.config");
    std::ofstream(path) << config;
    flags.push_back("--model_base_path=" + base_.path());
    flags.push_back("--model_config_file=" + path);
    flags.push_back("--poll_interval_seconds=0");
    server_ = std::make_unique<ServerProcess>(flags);
    ASSERT_TRUE(server_->ok()) << server_->Logs();
    Reload();
  }

  void Reload() {
    v1::ReloadModelsResponse reload;
    ASSERT_TRUE(server_->stub()
                    .ReloadModels(ClientContextFor(30, true).get(), v1::ReloadModelsRequest(),
                                  &reload)
                    .ok());
  }

  // Ranks and returns the version that answered (-code on error).
  int64_t Rank(const v1::RankRequest& request) {
    v1::RankResponse response;
    const grpc::Status status =
        server_->stub().Rank(ClientContextFor(30, true).get(), request, &response);
    if (!status.ok()) return -static_cast<int64_t>(status.error_code());
    return response.model_version();
  }

  v1::GetModelStatusResponse Status() {
    v1::GetModelStatusRequest request;
    request.set_name("web");
    v1::GetModelStatusResponse response;
    const grpc::Status status =
        server_->stub().GetModelStatus(ClientContextFor(30, true).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  // The comparison of serving -> shadow in the current status (a default
  // one when absent).
  v1::ShadowComparison Pair(int64_t serving, int64_t shadow) {
    const v1::GetModelStatusResponse status = Status();
    for (const v1::ShadowComparison& pair : status.shadow().comparisons()) {
      if (pair.serving_version() == serving &&
          pair.shadow_version() == shadow) {
        return pair;
      }
    }
    return v1::ShadowComparison();
  }

  std::string Metrics() {
    return HttpGet(server_->metrics_port(), "/metrics");
  }

  double Metric(const std::string& series) {
    return MetricValue(Metrics(), series).value_or(-1);
  }

  TempDir base_;
  std::unique_ptr<ServerProcess> server_;
};

std::string ShadowSeries(const std::string& name, const std::string& shadow,
                         const std::string& result = "") {
  return name + "{model=\"web\"," +
         (result.empty() ? "" : "result=\"" + result + "\",") +
         "shadow_version=\"" + shadow + "\",version=\"1\"}";
}

TEST_F(ShadowScoringTest, IdenticalShadowVersionScoresEveryRequestAndAgrees) {
  Start(R"pb(
          models {
            name: "web"
            version_policy { specific { versions: 1 } }
            shadow_version: 2
            shadow_fraction: 1.0
          })pb",
        {"--shadow_queue_capacity=1000"});
  // The shadow loaded (pinnable) but did not take the default.
  v1::GetModelStatusResponse status = Status();
  EXPECT_EQ(status.status().default_version(), 1);
  EXPECT_EQ(status.shadow().configured_version(), 2);
  EXPECT_EQ(status.shadow().fraction(), 1.0);
  EXPECT_EQ(status.shadow().shadow_version(), 2);
  EXPECT_EQ(status.shadow().error(), "");

  constexpr int kRequests = 20;
  for (int i = 0; i < kRequests; ++i) ASSERT_EQ(Rank(Request(12)), 1);
  // RankBatch queries are shadowed one by one.
  v1::RankBatchRequest batch;
  for (int i = 0; i < 3; ++i) *batch.add_requests() = Request(5);
  v1::RankBatchResponse batch_response;
  ASSERT_TRUE(server_->stub()
                  .RankBatch(ClientContextFor(30, true).get(), batch, &batch_response)
                  .ok());
  // A request pinned to the shadow itself is not shadowed.
  v1::RankRequest pinned = Request(4);
  pinned.mutable_model_spec()->set_version(2);
  ASSERT_EQ(Rank(pinned), 2);

  constexpr int kShadowed = kRequests + 3;
  ASSERT_TRUE(Eventually([&] { return Pair(1, 2).scored() >= kShadowed; }))
      << Status().DebugString();
  const v1::ShadowComparison pair = Pair(1, 2);
  EXPECT_EQ(pair.scored(), kShadowed);
  EXPECT_EQ(pair.dropped(), 0u);
  EXPECT_EQ(pair.failed(), 0u);
  EXPECT_EQ(pair.tau_count(), kShadowed);
  EXPECT_THAT(pair.mean_kendall_tau(), DoubleNear(1.0, 1e-12));
  EXPECT_EQ(pair.top1_agreement(), 1.0);
  EXPECT_EQ(pair.mean_top10_overlap(), 1.0);

  // The same in /metrics (the counters are recorded before the summary is
  // read back, but scrape until they show to stay order-independent).
  const std::string scored =
      ShadowSeries("plrank_shadow_requests_total", "2", "scored");
  ASSERT_TRUE(Eventually([&] { return Metric(scored) >= kShadowed; }))
      << Metrics();
  EXPECT_EQ(Metric(scored), kShadowed);
  EXPECT_EQ(Metric(ShadowSeries("plrank_shadow_kendall_tau_count", "2")),
            kShadowed);
  EXPECT_EQ(Metric(ShadowSeries("plrank_shadow_kendall_tau_sum", "2")),
            kShadowed);
  EXPECT_EQ(
      Metric(ShadowSeries("plrank_shadow_top1_agreements_total", "2")),
      kShadowed);
  EXPECT_EQ(Metric(ShadowSeries("plrank_shadow_top10_overlap_sum", "2")),
            kShadowed);
  EXPECT_EQ(MetricValue(Metrics(), ShadowSeries("plrank_shadow_requests_total",
                                                "2", "dropped")),
            std::nullopt);

  // plrank-client status prints the summary.
  const auto cli = plrank::testing::RunCommand(
      {plrank::testing::BinPath("plrank-client"),
       "--target=" + server_->target(), "--model=web", "status"});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_THAT(cli.out,
              HasSubstr("shadow: version 2, fraction 1\n"
                        "  serving 1 -> shadow 2: 23 scored, 0 dropped, 0 "
                        "failed; mean tau 1.0000 over 23, top-1 agreement "
                        "1.0000, mean top-10 overlap 1.0000\n"));
}

TEST_F(ShadowScoringTest, ShadowByLabelMeasuresADifferentModel) {
  Start(R"pb(
          models {
            name: "web"
            version_policy { specific { versions: 1 } }
            version_labels { key: "stable" value: 1 }
            version_labels { key: "candidate" value: 3 }
            shadow_label: "candidate"
            shadow_fraction: 1.0
          })pb",
        {"--shadow_queue_capacity=1000"});
  const v1::GetModelStatusResponse status = Status();
  EXPECT_EQ(status.shadow().configured_label(), "candidate");
  EXPECT_EQ(status.shadow().shadow_version(), 3);
  // Other labels promote a newer version; the shadow label does not.
  EXPECT_EQ(status.status().default_version(), 1);

  constexpr int kRequests = 10;
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_EQ(Rank(Request(8, i % 2 == 0 ? "stable" : "")), 1);
  }
  // Asking for the shadow's label gets the shadow, unshadowed.
  ASSERT_EQ(Rank(Request(8, "candidate")), 3);
  ASSERT_TRUE(Eventually([&] { return Pair(1, 3).scored() >= kRequests; }))
      << Status().DebugString();
  const v1::ShadowComparison pair = Pair(1, 3);
  EXPECT_EQ(pair.scored(), kRequests);
  EXPECT_EQ(pair.failed(), 0u);
  // Version 3 keeps the x0 groups but reverses each: of the 28 pairs, the
  // 16 across groups agree and the 12 within disagree: tau = 4/28.
  EXPECT_THAT(pair.mean_kendall_tau(), DoubleNear(4.0 / 28.0, 1e-9));
  EXPECT_EQ(pair.top1_agreement(), 0.0);
  // Top 8 of 8: the same set.
  EXPECT_EQ(pair.mean_top10_overlap(), 1.0);
  EXPECT_TRUE(Eventually([&] {
    return Metric(ShadowSeries("plrank_shadow_requests_total", "3",
                               "scored")) == kRequests;
  })) << Metrics();
  EXPECT_EQ(Metric(ShadowSeries("plrank_shadow_top1_agreements_total", "3")),
            0);
}

TEST_F(ShadowScoringTest, FractionZeroScoresNothing) {
  Start(R"pb(
    models {
      name: "web"
      version_policy { specific { versions: 1 } }
      shadow_version: 2
    })pb");
  for (int i = 0; i < 20; ++i) ASSERT_EQ(Rank(Request(5)), 1);
  // Sampling happens before the answer is sent: nothing can still come.
  const v1::GetModelStatusResponse status = Status();
  EXPECT_TRUE(status.has_shadow());
  EXPECT_EQ(status.shadow().fraction(), 0.0);
  EXPECT_EQ(status.shadow().comparisons_size(), 0);
  EXPECT_THAT(Metrics(), Not(HasSubstr("plrank_shadow_requests_total{")));
}

TEST_F(ShadowScoringTest, UnknownShadowVersionIsReportedAndServingGoesOn) {
  Start(R"pb(
    models {
      name: "web"
      version_policy { specific { versions: 1 } }
      shadow_version: 9
      shadow_fraction: 1.0
    })pb");
  for (int i = 0; i < 5; ++i) ASSERT_EQ(Rank(Request(5)), 1);
  v1::GetModelStatusResponse status = Status();
  EXPECT_EQ(status.status().default_version(), 1);
  EXPECT_EQ(status.shadow().shadow_version(), 0);
  EXPECT_THAT(status.shadow().error(),
              HasSubstr("version 9 of model 'web' is not loaded"));
  // Counted on the request path, so already complete.
  v1::ShadowComparison pair = Pair(1, 0);
  EXPECT_EQ(pair.failed(), 5u);
  EXPECT_EQ(pair.scored(), 0u);
  EXPECT_THAT(pair.last_error(), HasSubstr("not loaded"));
  EXPECT_EQ(Metric(ShadowSeries("plrank_shadow_requests_total", "unresolved",
                                "failed")),
            5);
  EXPECT_THAT(server_->stderr_text(), HasSubstr("shadow_unavailable"));

  // The version appears: the shadow resolves and copies are scored.
  ASSERT_FALSE(WriteTestModel(base_.path(), "web", 9, /*tag=*/1).empty());
  Reload();
  status = Status();
  EXPECT_EQ(status.shadow().shadow_version(), 9);
  EXPECT_EQ(status.shadow().error(), "");
  EXPECT_EQ(status.status().default_version(), 1);
  ASSERT_EQ(Rank(Request(5)), 1);
  EXPECT_TRUE(Eventually([&] { return Pair(1, 9).scored() == 1; }))
      << Status().DebugString();
}

TEST_F(ShadowScoringTest, FullQueueDropsCopiesAndCountsThem) {
  Start(R"pb(
          models {
            name: "web"
            version_policy { specific { versions: 1 } }
            shadow_version: 3
            shadow_fraction: 1.0
          })pb",
        {"--shadow_queue_capacity=1"});
  constexpr int kThreads = 8;
  constexpr int kPerThread = 40;
  std::atomic<int> served_by_one{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.emplace_back([&] {
      const v1::RankRequest request = Request(300);
      for (int i = 0; i < kPerThread; ++i) {
        if (Rank(request) == 1) ++served_by_one;
      }
    });
  }
  for (std::thread& client : clients) client.join();
  constexpr int kTotal = kThreads * kPerThread;
  EXPECT_EQ(served_by_one.load(), kTotal);
  // Every sampled copy ends scored or dropped (none fail); which is which
  // depends on timing, so only the sum is asserted.
  ASSERT_TRUE(Eventually([&] {
    const v1::ShadowComparison pair = Pair(1, 3);
    return pair.scored() + pair.dropped() + pair.failed() >= kTotal;
  })) << Status().DebugString();
  const v1::ShadowComparison pair = Pair(1, 3);
  EXPECT_EQ(pair.scored() + pair.dropped(), kTotal);
  EXPECT_EQ(pair.failed(), 0u);
  std::cout << "capacity 1: " << pair.scored() << " scored, "
            << pair.dropped() << " dropped of " << kTotal << "\n";
  const std::string metrics = Metrics();
  const double scored =
      MetricValue(metrics, ShadowSeries("plrank_shadow_requests_total", "3",
                                        "scored"))
          .value_or(0);
  const double dropped =
      MetricValue(metrics, ShadowSeries("plrank_shadow_requests_total", "3",
                                        "dropped"))
          .value_or(0);
  EXPECT_EQ(scored + dropped, kTotal) << metrics;
  EXPECT_EQ(dropped, static_cast<double>(pair.dropped()));
}

TEST_F(ShadowScoringTest, InvalidShadowConfigStopsStartupWithTheReason) {
  const std::string path = base_.File("bad.config");
  std::ofstream(path) << "models { name: 'web' shadow_version: 2 "
                         "shadow_fraction: 1.5 }";
  const auto result = plrank::testing::RunCommand(
      {plrank::testing::BinPath("plrank-server"),
       "--model_base_path=" + base_.path(), "--model_config_file=" + path,
       "--port=0", "--metrics_port=-1"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.err,
              HasSubstr("model 'web': shadow_fraction 1.5 is not in [0, 1]"));
}

}  // namespace
}  // namespace plrank
