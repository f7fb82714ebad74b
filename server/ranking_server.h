#ifndef PLRANK_SERVER_RANKING_SERVER_H_
#define PLRANK_SERVER_RANKING_SERVER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "server/admin_access.h"
#include "server/request_limits.h"

namespace plrank::server {

struct ServerOptions {
  std::string model_base_path;
  std::string model_config_file;  // optional
  // gRPC address. Loopback unless told otherwise: exposing the port is a
  // deployment decision (the image and the manifests pass 0.0.0.0).
  std::string host = "127.0.0.1";
  int32_t port = 8500;            // 0 = any free port (printed)
  // /metrics has its own address: it is plain HTTP even when gRPC is mTLS.
  std::string metrics_host = "127.0.0.1";
  int32_t metrics_port = 9400;    // 0 = any free port, < 0 = no /metrics
  AdminAccessPolicy admin;        // who may call the admin RPCs
  double poll_interval_seconds = 5.0;  // <= 0: scan once, then on Reload only
  RequestLimits limits;
  int32_t max_message_bytes = 64 << 20;
  int32_t num_threads = 0;        // max sync-server threads; 0 = gRPC default
  double drain_seconds = 10.0;
  // On SIGTERM, keep serving this long with health NOT_SERVING before
  // refusing new RPCs, so load balancers stop routing here first. A second
  // signal cuts it short.
  double lame_duck_seconds = 0.0;
  std::string tls_cert_file;      // with tls_key_file: TLS
  std::string tls_key_file;
  std::string tls_ca_file;        // also: require and verify client certs
  // Shadow copies waiting to be scored; more are dropped (>= 1).
  uint32_t shadow_queue_capacity = 16;
  // Impression log of sampled Rank queries (server/impression_log.h);
  // empty directory = off.
  std::string impression_log_dir;
  double impression_log_fraction = 1.0;
  uint32_t impression_log_queue_capacity = 1024;
  uint64_t impression_log_max_file_bytes = uint64_t{16} << 20;
  double impression_log_max_file_seconds = 300;
};

// The checks of `options` that need no file: ports in 0..65535 (a negative
// metrics port turns /metrics off), finite intervals (poll: <= 0 scans only
// at start and on ReloadModels; drain and lame duck in [0, 86400] s), every
// request limit and the shadow queue >= 1, messages of at least 1 KiB,
// num_threads >= 0. Messages name the flag. RunServer calls it first.
absl::Status ValidateServerOptions(const ServerOptions& options);

// Runs plrank-server until SIGTERM or SIGINT, then shuts down gracefully:
// health goes NOT_SERVING and polling stops; after lame_duck_seconds (still
// serving), new RPCs are refused and RPCs in flight get up to drain_seconds
// to finish. (gRPC fails calls that race the refusal with UNAVAILABLE or
// CANCELLED; they never started, so clients may retry them elsewhere.)
// Prints "listening on HOST:PORT" and "metrics on METRICS_HOST:PORT" on
// stdout once serving; those are its only listening sockets. Must be called before
// any other thread is started (it blocks the two signals process-wide).
// Returns an error when the server cannot start.
absl::Status RunServer(const ServerOptions& options);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_RANKING_SERVER_H_
