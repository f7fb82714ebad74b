#ifndef PLRANK_SERVER_STREAM_GUARD_H_
#define PLRANK_SERVER_STREAM_GUARD_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace plrank::server {

// Bounds what client-streaming RPCs (EvaluateStream) can hold. On the sync
// server each open stream holds a server thread while it waits for the
// client's next message: four streams that sent one message and never
// closed took every thread of --num_threads=4, and every other RPC failed
// with "Server Threadpool Exhausted". So:
//  - at most max_streams streams run at once; one more is refused at once
//    with RESOURCE_EXHAUSTED (it never holds a thread);
//  - a stream with no message for idle_timeout, or open for total_timeout,
//    is cancelled (its blocked Read returns), freeing its thread.
// Metrics (in `registry`, optional):
//   plrank_streams_active                            gauge
//   plrank_streams_refused_total                     counter
//   plrank_streams_timed_out_total{reason=idle|total} counter
// Thread-safe; one watchdog thread.
class StreamGuard {
 public:
  struct Options {
    uint32_t max_streams = 16;
    absl::Duration idle_timeout = absl::Seconds(60);
    absl::Duration total_timeout = absl::Seconds(3600);
  };

  // One admitted stream; the handler holds it until it returns.
  class Lease {
   public:
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    // A message arrived: the idle clock starts again.
    void Touch();
    // Why the guard cancelled the stream (DEADLINE_EXCEEDED with the
    // reason), OK when it did not.
    absl::Status TimedOut() const;

   private:
    friend class StreamGuard;
    Lease(StreamGuard* guard, uint64_t id) : guard_(guard), id_(id) {}
    StreamGuard* const guard_;
    const uint64_t id_;
  };

  StreamGuard(Options options, prometheus::Registry* registry);
  ~StreamGuard();  // joins the watchdog; every Lease must be gone
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

  // A lease for the stream of `context`, or RESOURCE_EXHAUSTED when
  // max_streams are open.
  absl::StatusOr<std::unique_ptr<Lease>> Admit(grpc::ServerContext* context);

  const Options& options() const { return options_; }

 private:
  struct Stream {
    grpc::ServerContext* context;
    absl::Time opened;
    absl::Time last_message;
    const char* timed_out = nullptr;  // "idle" / "total" once cancelled
  };

  void Watch();
  absl::Time DeadlineOf(const Stream& stream) const;

  const Options options_;
  prometheus::Gauge* active_ = nullptr;
  prometheus::Counter* refused_ = nullptr;
  prometheus::Counter* idle_timeouts_ = nullptr;
  prometheus::Counter* total_timeouts_ = nullptr;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  uint64_t next_id_ = 0;
  std::map<uint64_t, Stream> streams_;
  std::thread watchdog_;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_STREAM_GUARD_H_
