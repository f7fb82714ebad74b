#include "server/stream_guard.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace plrank::server {

StreamGuard::StreamGuard(Options options, prometheus::Registry* registry)
    : options_(std::move(options)) {
  if (registry != nullptr) {
    active_ = &prometheus::BuildGauge()
                   .Name("plrank_streams_active")
                   .Help("Client-streaming RPCs (EvaluateStream) open now")
                   .Register(*registry)
                   .Add({});
    refused_ = &prometheus::BuildCounter()
                    .Name("plrank_streams_refused_total")
                    .Help("Client-streaming RPCs refused because "
                          "--max_streaming_rpcs were open")
                    .Register(*registry)
                    .Add({});
    auto& timeouts = prometheus::BuildCounter()
                         .Name("plrank_streams_timed_out_total")
                         .Help("Client-streaming RPCs cancelled by the server: "
                               "no message for --stream_idle_timeout_seconds "
                               "(idle) or open for --stream_timeout_seconds "
                               "(total)")
                         .Register(*registry);
    idle_timeouts_ = &timeouts.Add({{"reason", "idle"}});
    total_timeouts_ = &timeouts.Add({{"reason", "total"}});
  }
  watchdog_ = std::thread(&StreamGuard::Watch, this);
}

StreamGuard::~StreamGuard() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  watchdog_.join();
}

absl::StatusOr<std::unique_ptr<StreamGuard::Lease>> StreamGuard::Admit(
    grpc::ServerContext* context) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (streams_.size() >= options_.max_streams) {
    if (refused_ != nullptr) refused_->Increment();
    return absl::ResourceExhaustedError(absl::StrCat(
        options_.max_streams,
        " streams are open, the most this server runs at once; retry later "
        "or use Evaluate"));
  }
  const uint64_t id = ++next_id_;
  const absl::Time now = absl::Now();
  streams_[id] = Stream{context, now, now};
  if (active_ != nullptr) active_->Set(static_cast<double>(streams_.size()));
  changed_.notify_all();
  return std::unique_ptr<Lease>(new Lease(this, id));
}

StreamGuard::Lease::~Lease() {
  std::lock_guard<std::mutex> lock(guard_->mutex_);
  guard_->streams_.erase(id_);
  if (guard_->active_ != nullptr) {
    guard_->active_->Set(static_cast<double>(guard_->streams_.size()));
  }
}

void StreamGuard::Lease::Touch() {
  std::lock_guard<std::mutex> lock(guard_->mutex_);
  auto it = guard_->streams_.find(id_);
  if (it != guard_->streams_.end()) it->second.last_message = absl::Now();
}

absl::Status StreamGuard::Lease::TimedOut() const {
  std::lock_guard<std::mutex> lock(guard_->mutex_);
  auto it = guard_->streams_.find(id_);
  if (it == guard_->streams_.end() || it->second.timed_out == nullptr) {
    return absl::OkStatus();
  }
  const bool idle = std::string_view(it->second.timed_out) == "idle";
  return absl::DeadlineExceededError(absl::StrCat(
      "the server closed the stream: ",
      idle ? absl::StrCat("no message for ",
                          absl::FormatDuration(guard_->options_.idle_timeout))
           : absl::StrCat("open for more than ",
                          absl::FormatDuration(guard_->options_.total_timeout)),
      " (send the messages, then close the stream)"));
}

absl::Time StreamGuard::DeadlineOf(const Stream& stream) const {
  return std::min(stream.last_message + options_.idle_timeout,
                  stream.opened + options_.total_timeout);
}

void StreamGuard::Watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    const absl::Time now = absl::Now();
    absl::Time next = now + absl::Seconds(60);
    for (auto& [id, stream] : streams_) {
      if (stream.timed_out != nullptr) continue;
      const absl::Time deadline = DeadlineOf(stream);
      if (deadline <= now) {
        const bool idle =
            stream.last_message + options_.idle_timeout <= now;
        stream.timed_out = idle ? "idle" : "total";
        prometheus::Counter* counter = idle ? idle_timeouts_ : total_timeouts_;
        if (counter != nullptr) counter->Increment();
        // Under the lock: the lease (and the RPC) cannot end meanwhile.
        // TryCancel may be called from any thread; the handler's blocked
        // Read returns false.
        stream.context->TryCancel();
        continue;
      }
      next = std::min(next, deadline);
    }
    changed_.wait_for(lock, absl::ToChronoNanoseconds(next - now));
  }
}

}  // namespace plrank::server
