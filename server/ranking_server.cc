#include "server/ranking_server.h"

#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/program.h"
#include "core/scoring/scoring_kernel.h"
#include "grpc/grpc.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "prometheus/exposer.h"
#include "server/calls_in_flight.h"
#include "server/health_reporter.h"
#include "server/http/http_api.h"
#include "server/http/http_server.h"
#include "server/impression_log.h"
#include "server/kserve/inference_service.h"
#include "server/kserve/open_inference.h"
#include "server/lifecycle/scan_scheduler.h"
#include "server/lifecycle/server_config.h"
#include "server/lifecycle/structured_log.h"
#include "server/lifecycle/version_manager.h"
#include "server/memory_releaser.h"
#include "server/process_metrics.h"
#include "server/ranker_service.h"
#include "server/reflection_v1.h"
#include "server/server_metrics.h"
#include "server/shadow_scoring.h"
#include "server/tls_credentials.h"

namespace plrank::server {
namespace {

constexpr double kMaxShutdownSeconds = 86400;
constexpr int32_t kMinMessageBytes = 1024;
// gRPC takes these as int milliseconds: 24 days at most.
constexpr double kMaxConnectionSeconds = 2000000;

int ToMilliseconds(double seconds) {
  return static_cast<int>(std::min(seconds * 1000, 2e9));
}

std::string HostPort(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return ipv6 ? absl::StrCat("[", host, "]:", port)
              : absl::StrCat(host, ":", port);
}

}  // namespace

absl::Status ValidateServerOptions(const ServerOptions& options) {
  // absl parses --port=70000 happily; gRPC would then bind port 4464.
  for (const auto& [flag, port, may_be_off] :
       {std::tuple<const char*, int32_t, bool>{"port", options.port, false},
        {"metrics_port", options.metrics_port, true},
        {"http_port", options.http_port, true}}) {
    if (port > 65535 || (port < 0 && !may_be_off)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, " must be in 0..65535 (0 = any free port",
          may_be_off ? ", negative = off" : "", "), got ", port));
    }
  }
  if (!options.scoring_kernel.empty() &&
      options.scoring_kernel != kAutoScoringKernel &&
      FindScoringKernel(options.scoring_kernel) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--scoring_kernel: unknown kernel '", options.scoring_kernel,
        "' (known: ", kAutoScoringKernel, ", ", ScoringKernelNames(), ")"));
  }
  // NaN fails every comparison, so these are written to refuse it.
  if (!std::isfinite(options.poll_interval_seconds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--poll_interval_seconds must be a finite number of seconds (<= 0: "
        "scan at start and on ReloadModels only), got ",
        options.poll_interval_seconds));
  }
  for (const auto& [flag, seconds] :
       {std::pair<const char*, double>{"drain_seconds", options.drain_seconds},
        {"lame_duck_seconds", options.lame_duck_seconds},
        {"max_connection_age_seconds", options.max_connection_age_seconds},
        {"max_connection_age_grace_seconds",
         options.max_connection_age_grace_seconds},
        {"vanished_grace_seconds", options.vanished_grace_seconds}}) {
    if (!(seconds >= 0 && seconds <= kMaxShutdownSeconds)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, " must be in [0, ", kMaxShutdownSeconds,
                       "] seconds, got ", seconds));
    }
  }
  for (const auto& [flag, seconds] :
       {std::pair<const char*, double>{"stream_idle_timeout_seconds",
                                       options.stream_idle_timeout_seconds},
        {"stream_timeout_seconds", options.stream_timeout_seconds},
        {"keepalive_time_seconds", options.keepalive_time_seconds},
        {"keepalive_timeout_seconds", options.keepalive_timeout_seconds},
        {"min_client_ping_interval_seconds",
         options.min_client_ping_interval_seconds},
        {"max_connection_idle_seconds", options.max_connection_idle_seconds}}) {
    if (!(seconds >= 0.001 && seconds <= kMaxConnectionSeconds)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, " must be in [0.001, ",
                       kMaxConnectionSeconds, "] seconds, got ", seconds));
    }
  }
  if (options.grpc_memory_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--grpc_memory_bytes must be >= 0 (0 = unbounded), got ",
        options.grpc_memory_bytes));
  }
  const RequestLimits& limits = options.limits;
  for (const auto& [flag, limit] :
       {std::pair<const char*, uint64_t>{"max_documents_per_request",
                                         limits.max_documents_per_request},
        {"max_queries_per_request", limits.max_queries_per_request},
        {"max_evaluate_documents", limits.max_evaluate_documents},
        {"max_explain_cost", limits.max_explain_cost},
        {"max_batch_queries", limits.max_batch_queries},
        {"max_batch_documents", limits.max_batch_documents},
        {"max_ndcg_cutoffs", limits.max_ndcg_cutoffs},
        {"max_model_file_bytes", options.max_model_file_bytes},
        {"max_streaming_rpcs", options.max_streaming_rpcs},
        {"max_concurrent_streams", options.max_concurrent_streams},
        {"shadow_queue_capacity", options.shadow_queue_capacity}}) {
    if (limit == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, " must be at least 1 (0 would let nothing through)"));
    }
  }
  // gRPC reads a negative size as "no limit" and 0 as "refuse everything".
  if (options.max_message_bytes < kMinMessageBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_message_bytes must be at least ", kMinMessageBytes,
                     ", got ", options.max_message_bytes));
  }
  if (options.num_threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--num_threads must be >= 0 (0 = gRPC's default), got ",
                     options.num_threads));
  }
  return absl::OkStatus();
}

// Declared in construction order: destroyed in reverse, so the services go
// before the manager and the metrics they report to.
struct RankingServer::Running {
  explicit Running(const ServerOptions& options)
      : metrics(PlrankVersion()),
        process_metrics(std::make_shared<ProcessMetrics>()),
        manager({.base_path = options.model_base_path,
                 .config_file = options.model_config_file,
                 .observer = &metrics,
                 .vanished_grace = absl::Seconds(options.vanished_grace_seconds),
                 .max_model_file_bytes = options.max_model_file_bytes,
                 .max_loading_bytes = options.max_loading_bytes,
                 .scoring_kernel = options.scoring_kernel}),
        scanner(&manager, absl::Seconds(options.poll_interval_seconds)),
        shadow({options.shadow_queue_capacity, /*start_worker=*/true},
               &metrics),
        impressions(MakeImpressionLogger(options, metrics, &impressions_error)),
        service(&manager, &scanner, &metrics, ServiceLimits(options),
                options.admin, &releaser, &shadow, impressions.get()),
        streams({EffectiveStreamingRpcs(options),
                 absl::Seconds(options.stream_idle_timeout_seconds),
                 absl::Seconds(options.stream_timeout_seconds)},
                metrics.registry().get()),
        // The Open Inference Protocol (KServe v2) beside Ranker, on both
        // ports.
        open_inference(&manager, &metrics, options.limits),
        inference_service(&open_inference),
        // Reflection v1 beside the plugin's v1alpha (same answers).
        reflection_v1(
            {v1::Ranker::service_full_name(),
             inference::GRPCInferenceService::service_full_name(),
             "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection",
             grpc::reflection::v1::ServerReflection::service_full_name()}) {
    service.SetStreamGuard(&streams);
  }

  // A stream holds a sync-server thread while it waits for its client:
  // with a thread bound, streams may hold at most a quarter of them. The
  // rest are the poller, the workers of concurrent RPCs and a thread
  // changing between the two; with half held, a closed loop of single Rank
  // calls beside two waiting streams still met "Server Threadpool
  // Exhausted" now and then.
  static uint32_t EffectiveStreamingRpcs(const ServerOptions& options) {
    if (options.num_threads <= 0) return options.max_streaming_rpcs;
    return std::min<uint32_t>(
        options.max_streaming_rpcs,
        std::max<uint32_t>(1, static_cast<uint32_t>(options.num_threads) / 4));
  }

  // The impression log of --impression_log_dir (nullptr without one, or
  // when it cannot be opened: then `error` says why and Start fails).
  static std::unique_ptr<ImpressionLogger> MakeImpressionLogger(
      const ServerOptions& options, const ServerMetrics& metrics,
      absl::Status* error) {
    if (options.impression_log_dir.empty()) return nullptr;
    ImpressionLogOptions log_options;
    log_options.directory = options.impression_log_dir;
    log_options.fraction = options.impression_log_fraction;
    log_options.queue_capacity = options.impression_log_queue_capacity;
    log_options.max_file_bytes = options.impression_log_max_file_bytes;
    log_options.max_file_age =
        absl::Seconds(options.impression_log_max_file_seconds);
    auto created = ImpressionLogger::Create(log_options, metrics.registry());
    if (!created.ok()) {
      *error = created.status();
      return nullptr;
    }
    return *std::move(created);
  }

  static RequestLimits ServiceLimits(const ServerOptions& options) {
    RequestLimits limits = options.limits;
    limits.max_response_bytes =
        static_cast<uint64_t>(options.max_message_bytes);
    return limits;
  }

  ServerMetrics metrics;
  std::shared_ptr<ProcessMetrics> process_metrics;
  std::unique_ptr<prometheus::Exposer> exposer;
  VersionManager manager;
  ScanScheduler scanner;
  MemoryReleaser releaser;
  // Declared after `metrics` and `manager`: destroyed before them, so the
  // versions its queued copies hold are released while metrics still exist.
  ShadowScorer shadow;
  absl::Status impressions_error;  // why `impressions` could not be opened
  std::unique_ptr<ImpressionLogger> impressions;
  RankerService service;
  // After `service`: destroyed first, once no stream is left (the server
  // has been shut down and waited for).
  StreamGuard streams;
  OpenInference open_inference;
  InferenceService inference_service;
  ReflectionV1Service reflection_v1;
  // Before `server`: its interceptors count into it until the server is
  // destroyed.
  CallsInFlight calls;
  std::unique_ptr<grpc::Server> server;
  // After `server`: the HTTP port's gateway calls it; destroyed first.
  std::unique_ptr<HttpApi> http_api;
  std::unique_ptr<HttpServer> http;
  std::unique_ptr<HealthReporter> health;
  int port = 0;
  int metrics_port = -1;
};

RankingServer::RankingServer(ServerOptions options)
    : options_(std::move(options)) {}

RankingServer::~RankingServer() {
  Shutdown("destructor");
  Wait();
  if (shutdown_thread_.joinable()) shutdown_thread_.join();
}

int RankingServer::port() const {
  return running_ == nullptr ? 0 : running_->port;
}

int RankingServer::metrics_port() const {
  return running_ == nullptr ? -1 : running_->metrics_port;
}

absl::Status RankingServer::Start() {
  const ServerOptions& options = options_;
  if (running_ != nullptr) {
    return absl::FailedPreconditionError("RankingServer::Start called twice");
  }
  if (absl::Status valid = ValidateServerOptions(options); !valid.ok()) {
    return valid;
  }
  MemoryReleaser::ConfigureAllocator();

  std::error_code error;
  if (options.model_base_path.empty() ||
      !std::filesystem::is_directory(options.model_base_path, error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--model_base_path '", options.model_base_path,
        "' is not a directory"));
  }
  if (!options.model_config_file.empty()) {
    auto config = LoadServerConfig(options.model_config_file);
    if (!config.ok()) return config.status();
  }
  auto credentials = MakeServerCredentials(
      {options.tls_cert_file, options.tls_key_file, options.tls_ca_file});
  if (!credentials.ok()) return credentials.status();

  auto running = std::make_unique<Running>(options);
  if (!running->impressions_error.ok()) return running->impressions_error;
  if (options.metrics_port >= 0) {
    const std::string address =
        HostPort(options.metrics_host, options.metrics_port);
    try {  // prometheus-cpp reports a failed bind by throwing
      running->exposer = std::make_unique<prometheus::Exposer>(address, 2);
    } catch (const std::exception& e) {
      return absl::UnavailableError(
          absl::StrCat("cannot serve metrics on ", address, ": ", e.what()));
    }
    running->exposer->RegisterCollectable(running->metrics.registry());
    running->exposer->RegisterCollectable(running->process_metrics);
    running->metrics_port = running->exposer->GetListeningPorts().at(0);
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int selected_port = 0;
  const std::string address = HostPort(options.host, options.port);
  builder.AddListeningPort(address, *credentials, &selected_port);
  builder.RegisterService(&running->service);
  builder.RegisterService(&running->inference_service);
  builder.RegisterService(&running->reflection_v1);
  // Without SO_REUSEPORT gRPC opens exactly the announced socket: with it,
  // gRPC clones the listener for each of its completion queues, and for
  // --port=0 the clones bound other random ports nobody was told about. It
  // also keeps another process of the same user from sharing the port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             static_cast<int>(std::min<uint32_t>(
                                 options.max_concurrent_streams, 1 << 30)));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS,
                             ToMilliseconds(options.keepalive_time_seconds));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                             ToMilliseconds(options.keepalive_timeout_seconds));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
      ToMilliseconds(options.min_client_ping_interval_seconds));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  builder.AddChannelArgument(
      GRPC_ARG_MAX_CONNECTION_IDLE_MS,
      ToMilliseconds(options.max_connection_idle_seconds));
  if (options.max_connection_age_seconds > 0) {
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_AGE_MS,
        std::max(1, ToMilliseconds(options.max_connection_age_seconds)));
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
        ToMilliseconds(options.max_connection_age_grace_seconds));
  }
  if (options.num_threads > 0 || options.grpc_memory_bytes > 0) {
    grpc::ResourceQuota quota("plrank-server");
    if (options.num_threads > 0) {
      quota.SetMaxThreads(options.num_threads);
      // One completion queue: with gRPC's default (one per core), each
      // queue keeps its own poller threads under the same bound, and two
      // streams waiting on one queue left no thread to take a Rank there
      // ("Server Threadpool Exhausted") while the other queue's sat idle.
      builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS,
                                  1);
    }
    if (options.grpc_memory_bytes > 0) {
      quota.Resize(static_cast<size_t>(options.grpc_memory_bytes));
    }
    builder.SetResourceQuota(quota);
  }
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(running->calls.InterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  running->server = builder.BuildAndStart();
  if (running->server == nullptr || selected_port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", address));
  }
  running->port = selected_port;
  if (options.http_port >= 0) {
    // The JSON forms of the Ranker RPCs go through the in-process channel.
    grpc::ChannelArguments arguments;
    arguments.SetMaxReceiveMessageSize(-1);
    arguments.SetMaxSendMessageSize(-1);
    running->http_api = std::make_unique<HttpApi>(
        &running->open_inference, running->server->InProcessChannel(arguments));
    HttpServerOptions http_options;
    http_options.host = options.http_host;
    http_options.port = options.http_port;
    http_options.max_body_bytes =
        static_cast<uint64_t>(options.max_message_bytes);
    http_options.tls = {options.tls_cert_file, options.tls_key_file,
                        options.tls_ca_file};
    http_options.num_threads = 4;
    auto started = HttpServer::Start(
        http_options, [api = running->http_api.get()](const HttpRequest& request) {
          return api->Handle(request);
        });
    if (!started.ok()) {
      running->server->Shutdown();
      return started.status();
    }
    running->http = std::move(*started);
  }
  running->health =
      std::make_unique<HealthReporter>(running->server->GetHealthCheckService());
  HealthReporter* health = running->health.get();
  running->manager.SetListener(
      [health](const ServingSnapshot& snapshot) { health->Update(snapshot); });

  const std::string metrics_address =
      running->exposer == nullptr
          ? std::string("off")
          : HostPort(options.metrics_host, running->metrics_port);
  std::printf("listening on %s\n", HostPort(options.host, selected_port).c_str());
  if (running->exposer != nullptr) {
    std::printf("metrics on %s\n", metrics_address.c_str());
  }
  if (running->http != nullptr) {
    std::printf("http on %s\n",
                HostPort(options.http_host, running->http->port()).c_str());
  }
  std::fflush(stdout);
  LogEvent("info", "server_started",
           {{"address", HostPort(options.host, selected_port)},
            {"metrics_address", metrics_address},
            {"admin_rpcs", options.admin.from_any ? "any" : "loopback"},
            {"max_streaming_rpcs",
             absl::StrCat(running->streams.options().max_streams)},
            {"model_base_path", options.model_base_path},
            {"config", options.model_config_file},
            {"version", std::string(PlrankVersion())}});

  running->scanner.Start();
  running_ = std::move(running);
  return absl::OkStatus();
}

void RankingServer::Reload(const std::string& reason) {
  if (running_ == nullptr || IsShutDown()) return;
  LogEvent("info", "reload_requested", {{"reason", reason}});
  running_->scanner.RequestScan();
}

void RankingServer::Shutdown(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (running_ == nullptr || shut_down_) return;
  if (shutdown_requested_) {
    lame_duck_cut_short_ = true;
    changed_.notify_all();
    return;
  }
  shutdown_requested_ = true;
  shutdown_thread_ = std::thread(&RankingServer::RunShutdown, this, reason);
}

void RankingServer::RunShutdown(std::string reason) {
  const ServerOptions& options = options_;
  Running& running = *running_;
  LogEvent("info", "shutdown_started",
           {{"signal", reason},
            {"lame_duck_seconds", absl::StrCat(options.lame_duck_seconds)},
            {"drain_seconds", absl::StrCat(options.drain_seconds)}});
  running.health->Shutdown();
  running.scanner.StopPolling();
  if (options.lame_duck_seconds > 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock,
                      std::chrono::duration<double>(options.lame_duck_seconds),
                      [this] { return lame_duck_cut_short_; });
  }
  const absl::Time drain_start = absl::Now();
  if (running.http != nullptr) running.http->Shutdown();
  const auto drain_time = std::chrono::milliseconds(
      static_cast<int64_t>(options.drain_seconds * 1000));
  // Server::Shutdown sends GOAWAY, waits for the RPCs in flight and then
  // for every connection to close, up to the deadline: a client that keeps
  // an idle connection open (a keepalive connection, a client that ignores
  // GOAWAY) held the drain to its full deadline. Beside it, once no RPC is
  // in flight, the connections are closed (grpc_server_cancel_all_calls,
  // which has no call to cancel then), so the drain ends when the RPCs do.
  std::mutex drain_mutex;
  std::condition_variable drain_changed;
  bool drained_flag = false;
  std::thread closer([&] {
    const auto deadline = std::chrono::steady_clock::now() + drain_time;
    std::unique_lock<std::mutex> lock(drain_mutex);
    while (!drained_flag && std::chrono::steady_clock::now() < deadline) {
      lock.unlock();
      const uint64_t started = running.calls.started();
      const bool idle = running.calls.WaitUntilIdle(deadline);
      lock.lock();
      // A call the core has just handed to a server thread is counted a
      // moment later: wait a little and close only if no call started.
      if (idle && drain_changed.wait_for(lock, std::chrono::milliseconds(50),
                                         [&] { return drained_flag; })) {
        break;
      }
      if (idle && running.calls.in_flight() == 0 &&
          running.calls.started() == started) {
        grpc_server_cancel_all_calls(running.server->c_server());
      }
      drain_changed.wait_for(lock, std::chrono::milliseconds(100),
                             [&] { return drained_flag; });
    }
  });
  running.server->Shutdown(std::chrono::system_clock::now() + drain_time);
  running.server->Wait();
  {
    std::lock_guard<std::mutex> lock(drain_mutex);
    drained_flag = true;
  }
  drain_changed.notify_all();
  closer.join();
  if (running.impressions != nullptr) running.impressions->Flush();
  running.scanner.Stop();
  const double drained = absl::ToDoubleSeconds(absl::Now() - drain_start);
  // Shutdown() cancels what is still running at the deadline.
  if (drained >= options.drain_seconds) {
    LogEvent("warning", "drain_timeout",
             {{"drain_seconds", absl::StrCat(options.drain_seconds)}});
  }
  LogEvent("info", "shutdown_complete",
           {{"drain_seconds_used", absl::StrCat(drained)}});
  std::lock_guard<std::mutex> lock(mutex_);
  shut_down_ = true;
  changed_.notify_all();
}

void RankingServer::Wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (running_ == nullptr) return;
  changed_.wait(lock, [this] { return shut_down_; });
}

bool RankingServer::IsShutDown() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return shut_down_;
}

}  // namespace plrank::server
