#include "clients/loadgen/load_generator.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "absl/status/status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/generic/generic_stub.h"

namespace plrank::loadgen {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kRankMethod[] = "/plrank.v1.Ranker/Rank";

// One call in flight; owned by the loop from send to completion.
struct PendingCall {
  grpc::ClientContext context;
  grpc::ByteBuffer response;
  grpc::Status status;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> reader;
  Clock::time_point start;  // scheduled (open loop) or actual send time
};

std::string CodeName(grpc::StatusCode code) {
  // grpc::StatusCode shares absl's canonical numbering and names.
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

}  // namespace

LoadResult RunRankLoad(const std::shared_ptr<grpc::Channel>& channel,
                       const std::vector<grpc::ByteBuffer>& requests,
                       const LoadOptions& options) {
  LoadResult result;
  if (requests.empty() || options.max_requests <= 0) return result;
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue queue;
  result.latencies_us.reserve(
      static_cast<size_t>(std::min<int64_t>(options.max_requests, 1 << 24)));

  const bool open_loop = options.rate_qps > 0;
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(open_loop ? 1.0 / options.rate_qps : 0.0));
  const auto call_deadline = absl::ToChronoNanoseconds(options.call_deadline);
  const Clock::time_point start = Clock::now();
  const Clock::time_point stop_sending =
      start + std::chrono::duration_cast<Clock::duration>(
                  absl::ToChronoNanoseconds(options.max_duration));
  Clock::time_point next_send = start;
  Clock::time_point last_completion = start;
  int64_t in_flight = 0;

  const auto send = [&](Clock::time_point scheduled) {
    auto* call = new PendingCall;
    call->start = scheduled;
    call->context.set_deadline(std::chrono::system_clock::now() + call_deadline);
    call->reader = stub.PrepareUnaryCall(
        &call->context, kRankMethod,
        requests[static_cast<size_t>(result.sent % requests.size())], &queue);
    call->reader->StartCall();
    call->reader->Finish(&call->response, &call->status, call);
    ++result.sent;
    ++in_flight;
  };

  while (true) {
    Clock::time_point now = Clock::now();
    const bool may_send =
        result.sent < options.max_requests && now < stop_sending;
    if (may_send && !open_loop) {
      while (in_flight < options.concurrency &&
             result.sent < options.max_requests) {
        send(Clock::now());
      }
    } else if (may_send) {
      while (next_send <= now && result.sent < options.max_requests &&
             in_flight < options.max_in_flight) {
        if (now - next_send > std::chrono::milliseconds(1)) ++result.late_sends;
        send(next_send);
        next_send = start + interval * result.sent;
      }
    }
    if (!may_send && in_flight == 0) break;

    // Sleep until a call completes, the next scheduled send, or the end of
    // the sending window; once sending is over, just drain.
    Clock::time_point wake = Clock::time_point::max();
    if (may_send) {
      wake = stop_sending;
      if (open_loop && in_flight < options.max_in_flight && next_send < wake) {
        wake = next_send;
      }
    }
    void* tag = nullptr;
    bool ok = false;
    const grpc::CompletionQueue::NextStatus next =
        wake == Clock::time_point::max()
            ? (queue.Next(&tag, &ok) ? grpc::CompletionQueue::GOT_EVENT
                                     : grpc::CompletionQueue::SHUTDOWN)
            : queue.AsyncNext(&tag, &ok,
                              std::chrono::system_clock::now() + (wake - Clock::now()));
    if (next == grpc::CompletionQueue::SHUTDOWN) break;
    if (next == grpc::CompletionQueue::TIMEOUT) continue;
    auto* call = static_cast<PendingCall*>(tag);
    const Clock::time_point done = Clock::now();
    last_completion = done;
    --in_flight;
    if (call->status.ok()) {
      ++result.ok;
      result.latencies_us.push_back(
          std::chrono::duration<double, std::micro>(done - call->start).count());
    } else {
      ++result.errors_by_code[CodeName(call->status.error_code())];
    }
    delete call;
  }
  result.elapsed_seconds =
      std::chrono::duration<double>(last_completion - start).count();
  queue.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (queue.Next(&tag, &ok)) {
  }
  return result;
}

}  // namespace plrank::loadgen
