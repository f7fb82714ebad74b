// Requests racing version swaps, in one process: reader threads resolve and
// rank through the current snapshot while other threads publish new
// versions (and broken ones) and scan concurrently, as the poller and the
// ReloadModels RPC do. Every request must succeed on a version that was
// available, with that version's scores. Under ThreadSanitizer
// (scripts/sanitize.sh tsan) this is the server's main data-race test.

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/lifecycle/scan_scheduler.h"
#include "server/lifecycle/version_manager.h"
#include "server/ranker_service.h"
#include "server/ranking.h"
#include "server/wire_status.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank::server {
namespace {

using ::plrank::testing::TempDir;
using ::plrank::testing::TestModelScore;
using ::plrank::testing::WriteRawModelFile;
using ::plrank::testing::WriteTestModel;

v1::RankRequest TwoDocuments() {
  v1::RankRequest request;
  request.mutable_model_spec()->set_name("web");
  v1::Document* high = request.add_documents();
  high->set_id("high");
  for (float x : {1.0f, 0.25f, 0.0f, 0.0f}) high->mutable_dense()->add_values(x);
  v1::Document* low = request.add_documents();
  low->set_id("low");
  low->mutable_sparse()->add_indices(1);
  low->mutable_sparse()->add_values(0.5f);
  return request;
}

TEST(ServingConcurrencyTest, RequestsSucceedWhileVersionsSwap) {
  constexpr int kReaders = 3;
  constexpr int64_t kLastVersion = 24;
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  VersionManagerOptions options;
  options.base_path = base.path();
  VersionManager manager(options);
  ASSERT_TRUE(manager.Scan().status.ok());

  std::atomic<bool> done{false};
  std::atomic<int64_t> requests{0};
  std::vector<std::string> errors(kReaders);
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      const v1::RankRequest request = TwoDocuments();
      auto keep_going = [] { return absl::OkStatus(); };
      while (!done.load() && errors[r].empty()) {
        auto version = manager.snapshot()->Resolve(
            *SelectorFromWire(request.model_spec()));
        if (!version.ok()) {
          errors[r] = version.status().ToString();
          break;
        }
        v1::RankResponse response;
        absl::Status status = RankDocuments(**version, request, {},
                                            keep_going, &response);
        if (!status.ok()) {
          errors[r] = status.ToString();
          break;
        }
        const int64_t v = response.model_version();
        if (v != (*version)->version() || response.documents_size() != 2 ||
            response.documents(0).id() != "high" ||
            response.documents(0).score() != TestModelScore(v, 1.0f, 0.25f) ||
            response.documents(1).score() != TestModelScore(v, 0.0f, 0.5f)) {
          errors[r] = "wrong ranking from version " + std::to_string(v) +
                      ": " + response.ShortDebugString();
        }
        requests.fetch_add(1);
      }
    });
  }
  // ReloadModels racing the poll loop. It once listed the models of a
  // snapshot it did not hold (a range-for over a temporary shared_ptr's
  // member), which a concurrent scan could free mid-loop (found by TSan).
  // Its scans run on the scheduler's thread, racing this thread's.
  // (An in-process call has no loopback peer: admin RPCs allowed from any.)
  ScanScheduler scanner(&manager, absl::ZeroDuration());
  scanner.Start();
  RankerService service(
      &manager, &scanner, nullptr, RequestLimits{},
      AdminAccessPolicy{.from_any = true, .tls_identities = {}});
  std::string reload_error;
  std::thread reloader([&] {
    while (!done.load() && reload_error.empty()) {
      grpc::ServerContext context;
      v1::ReloadModelsRequest request;
      v1::ReloadModelsResponse response;
      const grpc::Status status =
          service.ReloadModels(&context, &request, &response);
      if (!status.ok()) {
        reload_error = status.error_message();
      } else if (response.models_size() != 1) {
        reload_error = "models != 1";
      }
    }
  });
  for (int64_t v = 2; v <= kLastVersion; ++v) {
    if (v % 5 == 0) {
      WriteRawModelFile(base.path(), "web", v, "not a model");
    } else {
      WriteTestModel(base.path(), "web", v);
    }
    EXPECT_TRUE(manager.Scan().status.ok());
  }
  done.store(true);
  for (std::thread& reader : readers) reader.join();
  reloader.join();

  for (int r = 0; r < kReaders; ++r) EXPECT_EQ(errors[r], "") << "reader " << r;
  EXPECT_EQ(reload_error, "");
  EXPECT_GT(requests.load(), 0);
  auto last = manager.snapshot()->Resolve(
      *SelectorFromWire(TwoDocuments().model_spec()));
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ((*last)->version(), kLastVersion);  // good (only multiples of 5 are broken)
}

}  // namespace
}  // namespace plrank::server
