#ifndef PLRANK_SERVER_LIFECYCLE_SCAN_SCHEDULER_H_
#define PLRANK_SERVER_LIFECYCLE_SCAN_SCHEDULER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/lifecycle/version_manager.h"

namespace plrank::server {

// Runs every VersionManager::Scan() of a server on one thread of its own:
// at start, every `poll_interval` (none when <= 0) and whenever someone asks
// (ReloadModels). Model files are read, parsed and warmed up there, never on
// an RPC thread: a caller only waits for the outcome, and a caller that
// gives up (deadline, cancelled RPC) leaves the scan to finish for everyone.
//
// Requests coalesce: callers that ask while no scan has started yet share
// the next scan; a caller that asks while a scan runs gets the one after
// it, since that scan may have listed the repository before the caller's
// change.
class ScanScheduler {
 public:
  // `manager` must outlive the scheduler.
  ScanScheduler(VersionManager* manager, absl::Duration poll_interval);
  // Stops (see Stop()).
  ~ScanScheduler();
  ScanScheduler(const ScanScheduler&) = delete;
  ScanScheduler& operator=(const ScanScheduler&) = delete;

  // Starts the thread; its first scan begins at once. Call once.
  void Start();

  // No more periodic scans (a server shutting down); scans callers ask for
  // still run.
  void StopPolling();

  // Stops polling, lets a scan in progress finish and joins the thread.
  // Callers still waiting get UNAVAILABLE. Idempotent.
  void Stop();

  // Asks for a scan that starts after this call and waits for its summary
  // until `deadline`, or until `cancelled` (polled a few times a second)
  // returns true; before Start(), the scan at start is that scan.
  // DEADLINE_EXCEEDED / CANCELLED / UNAVAILABLE (stopped) otherwise; the
  // scan still runs.
  absl::StatusOr<ScanSummary> ScanAndWait(
      absl::Time deadline, const std::function<bool()>& cancelled = {});

  // Asks for a scan that starts after this call, without waiting for it
  // (SIGHUP). A no-op when not started or stopping.
  void RequestScan();

  // Scans started so far (for tests and logs).
  uint64_t scans_started() const;

 private:
  void Loop();

  VersionManager* const manager_;

  mutable std::mutex mutex_;
  absl::Duration poll_interval_;  // <= 0: no periodic scans
  std::condition_variable changed_;
  bool started_ = false;
  bool stopping_ = false;
  uint64_t requested_ = 0;  // highest scan number asked for
  uint64_t begun_ = 0;      // scans begun (a scan's number)
  uint64_t finished_ = 0;   // number of the last scan that finished
  ScanSummary last_summary_;
  std::thread thread_;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_LIFECYCLE_SCAN_SCHEDULER_H_
