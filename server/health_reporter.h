#ifndef PLRANK_SERVER_HEALTH_REPORTER_H_
#define PLRANK_SERVER_HEALTH_REPORTER_H_

#include <mutex>
#include <set>
#include <string>

#include "grpcpp/health_check_service_interface.h"
#include "server/lifecycle/serving_snapshot.h"

namespace plrank::server {

// grpc.health.v1 service names this server reports:
//   ""                          SERVING when at least one model has an
//   "plrank.v1.Ranker"          available version, else NOT_SERVING
//   "plrank.v1.Ranker/<model>"  SERVING when <model> has an available version
//   "plrank.liveness"           SERVING from start until shutdown begins,
//                               whether or not a model is loaded: for
//                               liveness probes, which must not restart a
//                               pod that merely waits for its first model
// A model that disappears from the repository stays NOT_SERVING (gRPC cannot
// unregister a name). After Shutdown() everything is NOT_SERVING for good.
inline constexpr char kRankerServiceName[] = "plrank.v1.Ranker";
inline constexpr char kLivenessServiceName[] = "plrank.liveness";

std::string ModelHealthServiceName(const std::string& model);

class HealthReporter {
 public:
  explicit HealthReporter(grpc::HealthCheckServiceInterface* health);

  // Thread-safe; a no-op after Shutdown().
  void Update(const ServingSnapshot& snapshot);
  void Shutdown();

 private:
  grpc::HealthCheckServiceInterface* const health_;
  std::mutex mutex_;
  bool shut_down_ = false;
  std::set<std::string> models_;  // every model name ever reported
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_HEALTH_REPORTER_H_
