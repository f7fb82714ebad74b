#include "server/lifecycle/scan_scheduler.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/status/status.h"

namespace plrank::server {
namespace {

// How often a waiting caller checks whether it was cancelled.
constexpr absl::Duration kCancellationCheck = absl::Milliseconds(100);
constexpr absl::Duration kLongestSingleWait = absl::Hours(1);

}  // namespace

ScanScheduler::ScanScheduler(VersionManager* manager,
                             absl::Duration poll_interval)
    : manager_(manager), poll_interval_(poll_interval) {}

ScanScheduler::~ScanScheduler() { Stop(); }

void ScanScheduler::Start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (started_ || stopping_) return;
  started_ = true;
  requested_ = 1;  // the scan at start
  thread_ = std::thread(&ScanScheduler::Loop, this);
}

void ScanScheduler::StopPolling() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    poll_interval_ = absl::ZeroDuration();
  }
  changed_.notify_all();
}

void ScanScheduler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t ScanScheduler::scans_started() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return begun_;
}

void ScanScheduler::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  // The interval runs from the end of one scan to the start of the next.
  absl::Time next_poll = absl::InfiniteFuture();
  while (!stopping_) {
    if (requested_ <= begun_) {
      const absl::Time now = absl::Now();
      if (now < next_poll) {
        // Bounded waits: chrono durations overflow on huge intervals.
        const absl::Duration wait =
            std::min(next_poll - now, kLongestSingleWait);
        changed_.wait_for(lock, absl::ToChronoNanoseconds(wait));
        // Stopped, asked, due, polling stopped or woken spuriously.
        if (poll_interval_ <= absl::ZeroDuration()) {
          next_poll = absl::InfiniteFuture();
        }
        continue;
      }
    }
    // Every request made so far is served by this scan, which starts now.
    const uint64_t number = ++begun_;
    requested_ = std::max(requested_, number);
    lock.unlock();
    ScanSummary summary = manager_->Scan();
    lock.lock();
    finished_ = number;
    last_summary_ = std::move(summary);
    changed_.notify_all();
    next_poll = poll_interval_ > absl::ZeroDuration()
                    ? absl::Now() + poll_interval_
                    : absl::InfiniteFuture();
  }
  changed_.notify_all();
}

void ScanScheduler::RequestScan() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!started_ || stopping_) return;
    requested_ = std::max(requested_, begun_ + 1);
  }
  changed_.notify_all();
}

absl::StatusOr<ScanSummary> ScanScheduler::ScanAndWait(
    absl::Time deadline, const std::function<bool()>& cancelled) {
  std::unique_lock<std::mutex> lock(mutex_);
  // Before Start the caller waits for the scan at start: a server accepts
  // calls a moment before its scanner starts, and a ReloadModels in that
  // moment must not fail.
  if (stopping_) {
    return absl::UnavailableError("the server is not scanning models now");
  }
  // A scan that has begun may have listed the repository already: ours is
  // the next one to begin.
  const uint64_t wanted = begun_ + 1;
  requested_ = std::max(requested_, wanted);
  changed_.notify_all();
  while (finished_ < wanted) {
    if (stopping_) {
      return absl::UnavailableError("the server is shutting down");
    }
    if (cancelled && cancelled()) {
      return absl::CancelledError(
          "the call was cancelled; the model scan goes on");
    }
    const absl::Time now = absl::Now();
    if (now >= deadline) {
      return absl::DeadlineExceededError(
          "the deadline passed before the model scan finished; the scan "
          "goes on, and GetModelStatus shows its outcome");
    }
    const absl::Duration wait = std::min(deadline - now, kCancellationCheck);
    changed_.wait_for(lock, absl::ToChronoNanoseconds(wait));
  }
  // A later scan may have finished too; its summary is newer, and covers
  // the files as they were when this caller asked.
  return last_summary_;
}

}  // namespace plrank::server
