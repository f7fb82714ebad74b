#ifndef PLRANK_SERVER_RANKING_SERVER_H_
#define PLRANK_SERVER_RANKING_SERVER_H_

#include <cstdint>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "server/admin_access.h"
#include "server/lifecycle/servable_version.h"
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
  // The HTTP port (Open Inference Protocol REST and the JSON form of the
  // Ranker RPCs, server/http/http_api.h): off unless set, loopback unless
  // told otherwise, TLS with the gRPC port's files.
  std::string http_host = "127.0.0.1";
  int32_t http_port = -1;         // 0 = any free port, < 0 = no HTTP port
  AdminAccessPolicy admin;        // who may call the admin RPCs
  double poll_interval_seconds = 5.0;  // <= 0: scan once, then on Reload only
  // A model directory (or a model's only serving version) missing from the
  // repository keeps serving this long before it is unloaded.
  double vanished_grace_seconds = 10.0;
  // A model.pb above this size fails to load unread (at most, and by
  // default, protobuf's 2 GiB - 1).
  uint64_t max_model_file_bytes = kMaxModelFileBytes;
  // Memory budget of all loaded versions (0 = none); see
  // VersionManagerOptions::max_loading_bytes.
  uint64_t max_loading_bytes = 0;
  RequestLimits limits;
  int32_t max_message_bytes = 64 << 20;
  int32_t num_threads = 0;        // max sync-server threads; 0 = gRPC default
  // What one client can hold (docs/server-limits.md). Client-streaming
  // RPCs (EvaluateStream) open at once; with num_threads set, at most
  // num_threads / 4 (at least 1): a stream holds a thread while it waits.
  uint32_t max_streaming_rpcs = 16;
  // A stream with no message for this long, or open this long, is closed.
  double stream_idle_timeout_seconds = 60.0;
  double stream_timeout_seconds = 3600.0;
  // HTTP/2 streams (RPCs in flight) on one connection.
  uint32_t max_concurrent_streams = 100;
  // The server pings a connection after this long without traffic and
  // closes it when the ping is not answered within keepalive_timeout (a
  // client that stopped reading cannot answer).
  double keepalive_time_seconds = 60.0;
  double keepalive_timeout_seconds = 20.0;
  // Keepalive enforcement: a client pinging more often than this without
  // sending data is sent GOAWAY (after gRPC's 2 strikes).
  double min_client_ping_interval_seconds = 10.0;
  // A connection with no RPC for this long is closed with GOAWAY (clients
  // reconnect when they need to); also keeps idle connections from
  // stretching the shutdown drain.
  double max_connection_idle_seconds = 300.0;
  // A connection open this long is sent GOAWAY, and closed after the grace
  // period even with RPCs in flight: bounds how long any one client holds
  // a connection, including one that reads slowly enough to answer
  // keepalive pings. 0 = no bound (gRPC's default).
  double max_connection_age_seconds = 0.0;
  double max_connection_age_grace_seconds = 30.0;
  // Memory gRPC may use for connections and buffers (its resource quota);
  // 0 = unbounded (gRPC's default).
  int64_t grpc_memory_bytes = 0;
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
  // "auto" (or empty): each model's kernels as ForestScorer's chooser picks
  // them; else one kernel by name (core/scoring/scoring_kernel.h) for every
  // model: a model it cannot score fails to load, saying why.
  std::string scoring_kernel = "auto";
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
// num_threads >= 0, a known scoring kernel. Messages name the flag. RankingServer::Start calls it
// first.
absl::Status ValidateServerOptions(const ServerOptions& options);

// plrank-server as an object, so a test (or another program) can run a
// server in-process. It installs no signal handler: server/server_main.cc
// owns the signals (SIGTERM/SIGINT -> Shutdown, a second one -> Shutdown
// again, which ends the lame duck; SIGHUP -> Reload; SIGPIPE ignored).
//
//   RankingServer server(options);
//   if (absl::Status started = server.Start(); !started.ok()) ...
//   ... server.port() ...
//   server.Shutdown("test");  // from any thread, returns at once
//   server.Wait();            // until the drain is over
//
// Start prints "listening on HOST:PORT", "metrics on METRICS_HOST:PORT" and,
// with an HTTP port, "http on HTTP_HOST:PORT" on stdout once serving; those
// are its only listening sockets. Shutdown is
// graceful: health goes NOT_SERVING and polling stops; after
// lame_duck_seconds (still serving), new RPCs are refused and RPCs in
// flight get up to drain_seconds to finish. (gRPC fails calls that race the
// refusal with UNAVAILABLE or CANCELLED; they never started, so clients may
// retry them elsewhere.) The destructor shuts down and waits when the
// caller did not.
class RankingServer {
 public:
  explicit RankingServer(ServerOptions options);
  ~RankingServer();
  RankingServer(const RankingServer&) = delete;
  RankingServer& operator=(const RankingServer&) = delete;

  // Validates the options, loads nothing yet (the first scan starts on the
  // scanning thread), binds both ports and starts serving. An error when
  // the server cannot start; call once.
  absl::Status Start();

  // The bound ports, once Start succeeded (metrics_port -1 when off).
  int port() const;
  int metrics_port() const;

  // Begins the graceful shutdown on a thread of its own and returns; a
  // call during the lame duck ends it early. `reason` goes to the log
  // (e.g. "SIGTERM"). Thread-safe; a no-op before Start or once done.
  void Shutdown(const std::string& reason);

  // Blocks until a Shutdown has completed (returns at once if Start failed
  // or was never called).
  void Wait();
  // Whether a Shutdown has completed.
  bool IsShutDown() const;

  // Asks the scanning thread for a scan of the config and the repository
  // (what ReloadModels does) without waiting for it. `reason` is logged.
  void Reload(const std::string& reason);

 private:
  struct Running;  // everything Start builds, in destruction order
  void RunShutdown(std::string reason);

  const ServerOptions options_;
  std::unique_ptr<Running> running_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool shutdown_requested_ = false;
  bool lame_duck_cut_short_ = false;
  bool shut_down_ = false;
  std::thread shutdown_thread_;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_RANKING_SERVER_H_
