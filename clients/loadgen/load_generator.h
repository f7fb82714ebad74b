#ifndef PLRANK_CLIENTS_LOADGEN_LOAD_GENERATOR_H_
#define PLRANK_CLIENTS_LOADGEN_LOAD_GENERATOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "clients/loadgen/load_report.h"
#include "grpcpp/channel.h"
#include "grpcpp/support/byte_buffer.h"

namespace plrank::loadgen {

struct LoadOptions {
  // Closed loop: keep exactly `concurrency` calls in flight. Open loop (rate
  // > 0): send at fixed intervals of 1/rate whatever the responses do, and
  // measure latency from each call's scheduled time, so a slow server cannot
  // hide its queueing by slowing the sender (no coordinated omission).
  int32_t concurrency = 1;
  double rate_qps = 0;
  // Open loop safety valve: at most this many calls in flight; a send that
  // would exceed it waits (and is then late, which the report counts).
  int32_t max_in_flight = 10000;
  // The run stops sending at whichever bound comes first, then waits for
  // the calls in flight.
  int64_t max_requests = 1000;
  absl::Duration max_duration = absl::Seconds(10);
  absl::Duration call_deadline = absl::Seconds(5);
};

// Sends pre-serialized plrank.v1.RankRequest messages (cycled in order) to
// the Rank method over `channel` with the asynchronous generic API, from the
// calling thread. Each call's response is received but not parsed: the
// generator measures the server and transport, not its own decoding.
LoadResult RunRankLoad(const std::shared_ptr<grpc::Channel>& channel,
                       const std::vector<grpc::ByteBuffer>& requests,
                       const LoadOptions& options);

}  // namespace plrank::loadgen

#endif  // PLRANK_CLIENTS_LOADGEN_LOAD_GENERATOR_H_
