#include "server/lifecycle/scan_scheduler.h"

#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/lifecycle/version_manager.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank::server {
namespace {

using ::plrank::testing::TempDir;
using ::plrank::testing::WriteTestModel;

// Records which threads published snapshots (every scan publishes) and
// wakes waiters on each.
class PublishRecorder {
 public:
  void Attach(VersionManager& manager) {
    manager.SetListener([this](const ServingSnapshot&) {
      std::lock_guard<std::mutex> lock(mutex_);
      threads_.insert(std::this_thread::get_id());
      ++published_;
      changed_.notify_all();
    });
  }
  // Waits until `count` snapshots were published (false after a minute:
  // a failure bound, not a synchronisation).
  bool WaitForPublished(int count) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::minutes(1),
                             [&] { return published_ >= count; });
  }
  std::set<std::thread::id> threads() {
    std::lock_guard<std::mutex> lock(mutex_);
    return threads_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::set<std::thread::id> threads_;
  int published_ = 0;
};

TEST(ScanSchedulerTest, LoadsRunOnTheSchedulersThreadNotTheCallers) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  VersionManager manager({base.path(), "", nullptr});
  PublishRecorder recorder;
  recorder.Attach(manager);
  ScanScheduler scanner(&manager, absl::ZeroDuration());
  scanner.Start();
  auto first = scanner.ScanAndWait(absl::InfiniteFuture());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->status.ok());
  EXPECT_EQ(manager.snapshot()->models.at("web").status.default_version, 1);

  // A version added later is loaded by the next scan asked for.
  WriteTestModel(base.path(), "web", 2);
  auto second = scanner.ScanAndWait(absl::InfiniteFuture());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->loaded, 1u);
  EXPECT_EQ(manager.snapshot()->models.at("web").status.default_version, 2);

  const std::set<std::thread::id> threads = recorder.threads();
  EXPECT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
}

TEST(ScanSchedulerTest, CallersThatGiveUpLeaveTheScanToFinish) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  VersionManager manager({base.path(), "", nullptr});
  ScanScheduler scanner(&manager, absl::ZeroDuration());
  scanner.Start();
  // The scan a caller asks for begins after the call, so it cannot have
  // finished when the caller first looks: both outcomes are certain.
  auto late = scanner.ScanAndWait(absl::InfinitePast());
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded);
  auto cancelled =
      scanner.ScanAndWait(absl::InfiniteFuture(), [] { return true; });
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled);
  // Scanning goes on for the next caller.
  auto patient = scanner.ScanAndWait(absl::InfiniteFuture());
  ASSERT_TRUE(patient.ok()) << patient.status();
  EXPECT_EQ(manager.snapshot()->models.at("web").status.default_version, 1);
}

TEST(ScanSchedulerTest, BeforeStartCallersWaitForTheScanAtStart) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  VersionManager manager({base.path(), "", nullptr});
  ScanScheduler scanner(&manager, absl::ZeroDuration());
  // Not UNAVAILABLE: it waits, here until its deadline.
  EXPECT_EQ(scanner.ScanAndWait(absl::Now() + absl::Milliseconds(50))
                .status()
                .code(),
            absl::StatusCode::kDeadlineExceeded);
  absl::StatusOr<ScanSummary> early;
  std::thread caller(
      [&] { early = scanner.ScanAndWait(absl::InfiniteFuture()); });
  scanner.Start();
  caller.join();
  ASSERT_TRUE(early.ok()) << early.status();
  ASSERT_TRUE(early->status.ok());
  EXPECT_EQ(manager.snapshot()->models.at("web").status.default_version, 1);
}

TEST(ScanSchedulerTest, UnavailableAfterStop) {
  TempDir base;
  VersionManager manager({base.path(), "", nullptr});
  ScanScheduler scanner(&manager, absl::ZeroDuration());
  scanner.Start();
  scanner.Stop();
  scanner.Stop();  // idempotent
  EXPECT_EQ(scanner.ScanAndWait(absl::InfiniteFuture()).status().code(),
            absl::StatusCode::kUnavailable);
  ScanScheduler never_started(&manager, absl::ZeroDuration());
  never_started.Stop();
  EXPECT_EQ(never_started.ScanAndWait(absl::InfiniteFuture()).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(ScanSchedulerTest, PollsWithoutBeingAsked) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  VersionManager manager({base.path(), "", nullptr});
  PublishRecorder recorder;
  recorder.Attach(manager);
  ScanScheduler scanner(&manager, absl::Milliseconds(1));
  scanner.Start();
  // The first scan publishes twice (the load, then the scan's end); each
  // later scan once.
  ASSERT_TRUE(recorder.WaitForPublished(5));
  EXPECT_GE(scanner.scans_started(), 3u);
  // With polling stopped, asked-for scans still run.
  scanner.StopPolling();
  auto asked = scanner.ScanAndWait(absl::InfiniteFuture());
  ASSERT_TRUE(asked.ok()) << asked.status();
}

TEST(ScanSchedulerTest, ConcurrentCallersAllGetAScanThatStartedAfterThem) {
  TempDir base;
  VersionManager manager({base.path(), "", nullptr});
  ScanScheduler scanner(&manager, absl::ZeroDuration());
  scanner.Start();
  std::vector<std::thread> callers;
  std::vector<int> ok(4, 0);
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      for (int i = 0; i < 5; ++i) {
        ok[c] += scanner.ScanAndWait(absl::InfiniteFuture()).ok() ? 1 : 0;
      }
    });
  }
  // A model written now is seen by the scans asked for from here on.
  WriteTestModel(base.path(), "web", 1);
  for (std::thread& caller : callers) caller.join();
  for (int c = 0; c < 4; ++c) EXPECT_EQ(ok[c], 5) << "caller " << c;
  auto last = scanner.ScanAndWait(absl::InfiniteFuture());
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(manager.snapshot()->models.at("web").status.default_version, 1);
  // 1 + at most one scan per call (coalesced calls share one).
  EXPECT_LE(scanner.scans_started(), 1u + 4 * 5 + 1);
}

}  // namespace
}  // namespace plrank::server
