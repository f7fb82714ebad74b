#ifndef PLRANK_SERVER_CALLS_IN_FLIGHT_H_
#define PLRANK_SERVER_CALLS_IN_FLIGHT_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "grpcpp/support/server_interceptor.h"

namespace plrank::server {

// Counts the RPCs of one gRPC server that are in flight, every service
// included (Ranker, KServe, health, reflection, the HTTP port's in-process
// calls), from the moment a server thread takes the call until its status
// is sent. The graceful drain uses it: gRPC 1.51's Server::Shutdown waits
// for every connection to close, not only for the RPCs, so idle keepalive
// connections held the drain to its full deadline; once nothing is in
// flight the drain closes them (RankingServer::RunShutdown).
class CallsInFlight {
 public:
  // A server interceptor factory counting into this object, for
  // ServerBuilder::experimental().SetInterceptorCreators. The object must
  // outlive the server.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  InterceptorFactory();

  // RPCs in flight now, and RPCs taken since the server started.
  int64_t in_flight() const;
  uint64_t started() const;

  // Waits until no RPC is in flight or `deadline` passes; true when none
  // is. Never waits past the deadline.
  bool WaitUntilIdle(std::chrono::steady_clock::time_point deadline) const;

  void Begin();
  void End();

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable idle_;
  int64_t in_flight_ = 0;
  uint64_t started_ = 0;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_CALLS_IN_FLIGHT_H_
