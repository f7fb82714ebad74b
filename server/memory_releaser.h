#ifndef PLRANK_SERVER_MEMORY_RELEASER_H_
#define PLRANK_SERVER_MEMORY_RELEASER_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "absl/time/time.h"

namespace plrank::server {

// Gives memory freed after large requests back to the operating system.
//
// glibc keeps freed heap memory in its per-thread arenas: after a burst of
// large requests (their protobuf messages, per-document objects and
// scratch buffers, freed by gRPC after the handler returns) the resident
// size stays at its peak. A background thread calls malloc_trim(0) at the
// next two ticks after a large request was noted: two, because the request's
// message is freed only after its handler (which notes it) has returned.
// Cheap when idle: nothing runs unless a large request was noted.
class MemoryReleaser {
 public:
  // Requests whose documents x features reach this are "large": 1 MiB of
  // feature values, several MiB as protobuf objects (e.g. 6,000 documents
  // of 46 features).
  static constexpr uint64_t kLargeRequestFloats = uint64_t{1} << 18;

  // Makes freed memory go back to the system in the first place: fixed
  // mmap and trim thresholds of 256 KiB. (glibc's dynamic thresholds grow
  // to the largest buffer ever freed, up to 32 MiB mmap / 64 MiB trim, and
  // malloc_trim never shrinks the top of a thread arena, so after large
  // requests several MiB per thread arena stayed resident.) Call once at
  // startup, before other threads allocate.
  static void ConfigureAllocator();

  explicit MemoryReleaser(absl::Duration tick = absl::Seconds(1));
  ~MemoryReleaser();  // stops and joins the thread
  MemoryReleaser(const MemoryReleaser&) = delete;
  MemoryReleaser& operator=(const MemoryReleaser&) = delete;

  // Called by a handler when it finished a request of `floats` feature
  // values; trims soon when that is at least kLargeRequestFloats.
  void NoteRequest(uint64_t floats);

 private:
  void Run();

  const absl::Duration tick_;
  std::mutex mutex_;
  std::condition_variable wake_;
  int pending_ticks_ = 0;  // trims still due
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_MEMORY_RELEASER_H_
