#include "server/memory_releaser.h"

#include <malloc.h>

#include <chrono>

namespace plrank::server {

void MemoryReleaser::ConfigureAllocator() {
  constexpr int kThresholdBytes = 256 * 1024;
  mallopt(M_MMAP_THRESHOLD, kThresholdBytes);
  mallopt(M_TRIM_THRESHOLD, kThresholdBytes);
}

MemoryReleaser::MemoryReleaser(absl::Duration tick)
    : tick_(tick), thread_([this] { Run(); }) {}

MemoryReleaser::~MemoryReleaser() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void MemoryReleaser::NoteRequest(uint64_t floats) {
  if (floats < kLargeRequestFloats) return;
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    wake = pending_ticks_ == 0;
    pending_ticks_ = 2;
  }
  if (wake) wake_.notify_all();
}

void MemoryReleaser::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    // Idle until a large request is noted, then trim once per tick while
    // trims are due.
    wake_.wait(lock, [this] { return stop_ || pending_ticks_ > 0; });
    if (stop_) break;
    wake_.wait_for(lock, absl::ToChronoMilliseconds(tick_),
                   [this] { return stop_; });
    if (stop_) break;
    --pending_ticks_;
    lock.unlock();
    malloc_trim(0);
    lock.lock();
  }
}

}  // namespace plrank::server
