// plrank-server: serves the models of a TF-Serving-style repository
// (<base>/<model>/<version>/model.pb) over the plrank.v1.Ranker gRPC API.
// Flag parsing and signals only; the server is server/ranking_server.h.
//
// Signals: SIGTERM and SIGINT start the graceful shutdown (a second one ends
// the lame duck early); SIGHUP rescans the config and the repository, as
// ReloadModels does (the server keeps running); SIGPIPE is ignored, so a log
// or stdout reader that goes away costs log lines (counted in
// plrank_log_write_failures_total), never the process.

#include <signal.h>
#include <time.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "common/program.h"
#include "server/ranking_server.h"

ABSL_FLAG(std::string, model_base_path, "",
          "Repository root: <base>/<model>/<version>/model.pb");
ABSL_FLAG(std::string, model_config_file, "",
          "Optional plrank.v1.ServerConfig in text format (models, version "
          "policies, labels); re-read at every scan");
ABSL_FLAG(std::string, host, "127.0.0.1",
          "gRPC address to listen on; 0.0.0.0 (or ::) = every interface");
ABSL_FLAG(int32_t, port, 8500, "gRPC port; 0 = pick a free port (printed)");
ABSL_FLAG(std::string, metrics_host, "127.0.0.1",
          "Address of /metrics (plain HTTP, whatever the gRPC TLS settings); "
          "0.0.0.0 for a Prometheus elsewhere");
ABSL_FLAG(int32_t, metrics_port, 9400,
          "Prometheus /metrics port; 0 = pick a free port (printed), "
          "-1 = disabled");
ABSL_FLAG(std::string, http_host, "127.0.0.1",
          "Address of the HTTP port (loopback unless told otherwise; "
          "0.0.0.0 exposes it)");
ABSL_FLAG(int32_t, http_port, -1,
          "HTTP port: the Open Inference Protocol's REST form and the JSON "
          "form of Rank, Explain, Evaluate and GetModelMetadata "
          "(docs/inference-protocol.md); 0 = pick a free port (printed), "
          "-1 = off (the default)");
ABSL_FLAG(bool, admin_from_any, false,
          "Answer the admin RPCs (ReloadModels, ListModels, GetModelStatus) "
          "to every client; by default only to loopback clients (and to "
          "--admin_tls_identities)");
ABSL_FLAG(std::vector<std::string>, admin_tls_identities, {},
          "With mTLS: comma-separated certificate names (common name or "
          "subject alternative name) whose verified clients may call the "
          "admin RPCs from anywhere");
ABSL_FLAG(double, poll_interval_seconds, 5.0,
          "Repository scan interval; 0 = scan at start and on ReloadModels "
          "only");
ABSL_FLAG(double, vanished_grace_seconds, 10.0,
          "A model directory, or a model's only serving version, missing "
          "from the repository keeps serving this long before it is "
          "unloaded (a directory replaced non-atomically); 0 = at once");
ABSL_FLAG(uint64_t, max_model_file_bytes, (uint64_t{1} << 31) - 1,
          "A model.pb larger than this fails to load by its size, unread "
          "(default and maximum: protobuf's 2 GiB - 1 message limit)");
ABSL_FLAG(uint64_t, max_loading_bytes, 0,
          "Memory budget of all loaded versions; a version whose estimate "
          "(8 x its model.pb size) added to what is loaded exceeds it is "
          "FAILED, and the serving versions stay; 0 = no budget");
ABSL_FLAG(uint32_t, max_documents_per_request, 10000,
          "Documents per Rank request / per Evaluate query");
ABSL_FLAG(uint32_t, max_queries_per_request, 10000,
          "Queries per Evaluate(Stream) message");
ABSL_FLAG(uint64_t, max_evaluate_documents, 5000000,
          "Documents over one Evaluate call or EvaluateStream stream");
ABSL_FLAG(uint64_t, max_explain_cost, 1000000000,
          "Work of one Explain request: documents x the version's cost per "
          "document (sum over trees of leaves x depth^2, plus the features "
          "it reads); more is RESOURCE_EXHAUSTED");
ABSL_FLAG(uint32_t, max_batch_queries, 1000, "Queries per RankBatch request");
ABSL_FLAG(uint64_t, max_batch_documents, 100000,
          "Documents over all the queries of one RankBatch request");
ABSL_FLAG(uint32_t, max_ndcg_cutoffs, 32,
          "ndcg_at cut-offs of one Evaluate call or EvaluateStream stream");
ABSL_FLAG(int32_t, max_message_bytes, 64 << 20,
          "Largest gRPC message received or sent");
ABSL_FLAG(int32_t, num_threads, 0,
          "Maximum threads of the gRPC sync server; 0 = gRPC's default");
ABSL_FLAG(uint32_t, max_streaming_rpcs, 16,
          "EvaluateStream calls open at once (each holds a server thread "
          "while it waits); with --num_threads, at most num_threads/4; more "
          "are RESOURCE_EXHAUSTED at once");
ABSL_FLAG(double, stream_idle_timeout_seconds, 60.0,
          "An EvaluateStream with no message for this long is cancelled");
ABSL_FLAG(double, stream_timeout_seconds, 3600.0,
          "An EvaluateStream open this long is cancelled");
ABSL_FLAG(uint32_t, max_concurrent_streams, 100,
          "RPCs in flight on one HTTP/2 connection");
ABSL_FLAG(double, keepalive_time_seconds, 60.0,
          "Ping a connection after this long without traffic");
ABSL_FLAG(double, keepalive_timeout_seconds, 20.0,
          "Close a connection whose ping is not answered within this long "
          "(a client that stopped reading)");
ABSL_FLAG(double, min_client_ping_interval_seconds, 10.0,
          "Keepalive enforcement: GOAWAY to a client pinging more often "
          "than this without data");
ABSL_FLAG(double, max_connection_idle_seconds, 300.0,
          "Close (GOAWAY) a connection with no RPC for this long");
ABSL_FLAG(double, max_connection_age_seconds, 0.0,
          "GOAWAY to a connection open this long, closed after "
          "--max_connection_age_grace_seconds even with RPCs in flight "
          "(bounds how long one client holds a connection); 0 = no bound");
ABSL_FLAG(double, max_connection_age_grace_seconds, 30.0,
          "With --max_connection_age_seconds: time RPCs in flight get "
          "before an aged connection is closed");
ABSL_FLAG(int64_t, grpc_memory_bytes, 0,
          "Memory gRPC may use for connections and buffers (its resource "
          "quota); 0 = unbounded");
ABSL_FLAG(double, drain_seconds, 10.0,
          "On SIGTERM/SIGINT, time given to RPCs in flight to finish");
ABSL_FLAG(double, lame_duck_seconds, 0.0,
          "On SIGTERM/SIGINT, keep serving this long with health "
          "NOT_SERVING before refusing new RPCs (load balancer drain)");
ABSL_FLAG(std::string, tls_cert_file, "", "PEM server certificate (TLS)");
ABSL_FLAG(std::string, tls_key_file, "", "PEM server private key (TLS)");
ABSL_FLAG(std::string, tls_ca_file, "",
          "PEM CA bundle; when set, clients must present a certificate it "
          "signed (mTLS)");

ABSL_FLAG(uint32_t, shadow_queue_capacity, 16,
          "Shadow scoring: sampled request copies waiting for the shadow "
          "worker; a copy sampled while the queue is full is dropped and "
          "counted (result=\"dropped\"), so answers never wait (>= 1)");

ABSL_FLAG(std::string, scoring_kernel, "auto",
          "Scoring kernel for every model: auto (the chooser picks each "
          "model's kernels by CPU and model shape) or one of "
          "rapid_avx512, dense_avx512_vbmi, quick_avx512, quick_avx2, "
          "chained_walks, lane_chains, lockstep_walks; a model the kernel "
          "cannot score fails to load, saying why. The kernel chosen is in "
          "the version_loaded log and in model status (scoring_kernel)");
ABSL_FLAG(std::string, impression_log_dir, "",
          "Write the impressions of sampled Rank queries (requests with a "
          "sampling spec) to rotated files in this existing directory "
          "(docs/clicks-serving.md); empty = off");
ABSL_FLAG(double, impression_log_fraction, 1.0,
          "Share of sampled Rank queries logged, in [0, 1] (chosen by a "
          "hash of the request id)");
ABSL_FLAG(uint32_t, impression_log_queue_capacity, 1024,
          "Sampled queries waiting for the impression log writer; more are "
          "dropped and counted, so answers never wait on disk");
ABSL_FLAG(uint64_t, impression_log_max_file_bytes, uint64_t{16} << 20,
          "An impression log file is published once it holds this many "
          "bytes (held in memory until then)");
ABSL_FLAG(double, impression_log_max_file_seconds, 300,
          "... or once its first entry is this many seconds old");

int main(int argc, char** argv) {
  const std::vector<char*> positional = plrank::ParseProgramFlags(
      argc, argv,
      "Serves PLRank models over gRPC.\n"
      "  plrank-server --model_base_path=/models --host=0.0.0.0 --port=8500");
  if (positional.size() > 1) {
    std::fprintf(stderr,
                 "plrank-server: error: unexpected argument %s (see --help)\n",
                 positional[1]);
    return 2;
  }
  plrank::server::ServerOptions options;
  options.model_base_path = absl::GetFlag(FLAGS_model_base_path);
  options.model_config_file = absl::GetFlag(FLAGS_model_config_file);
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
  options.metrics_host = absl::GetFlag(FLAGS_metrics_host);
  options.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  options.http_host = absl::GetFlag(FLAGS_http_host);
  options.http_port = absl::GetFlag(FLAGS_http_port);
  options.admin.from_any = absl::GetFlag(FLAGS_admin_from_any);
  options.admin.tls_identities = absl::GetFlag(FLAGS_admin_tls_identities);
  options.poll_interval_seconds = absl::GetFlag(FLAGS_poll_interval_seconds);
  options.vanished_grace_seconds = absl::GetFlag(FLAGS_vanished_grace_seconds);
  options.max_model_file_bytes = absl::GetFlag(FLAGS_max_model_file_bytes);
  options.max_loading_bytes = absl::GetFlag(FLAGS_max_loading_bytes);
  options.limits.max_documents_per_request =
      absl::GetFlag(FLAGS_max_documents_per_request);
  options.limits.max_queries_per_request =
      absl::GetFlag(FLAGS_max_queries_per_request);
  options.limits.max_evaluate_documents =
      absl::GetFlag(FLAGS_max_evaluate_documents);
  options.limits.max_explain_cost = absl::GetFlag(FLAGS_max_explain_cost);
  options.limits.max_batch_queries = absl::GetFlag(FLAGS_max_batch_queries);
  options.limits.max_batch_documents = absl::GetFlag(FLAGS_max_batch_documents);
  options.limits.max_ndcg_cutoffs = absl::GetFlag(FLAGS_max_ndcg_cutoffs);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.num_threads = absl::GetFlag(FLAGS_num_threads);
  options.max_streaming_rpcs = absl::GetFlag(FLAGS_max_streaming_rpcs);
  options.stream_idle_timeout_seconds =
      absl::GetFlag(FLAGS_stream_idle_timeout_seconds);
  options.stream_timeout_seconds = absl::GetFlag(FLAGS_stream_timeout_seconds);
  options.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  options.keepalive_time_seconds = absl::GetFlag(FLAGS_keepalive_time_seconds);
  options.keepalive_timeout_seconds =
      absl::GetFlag(FLAGS_keepalive_timeout_seconds);
  options.min_client_ping_interval_seconds =
      absl::GetFlag(FLAGS_min_client_ping_interval_seconds);
  options.max_connection_idle_seconds =
      absl::GetFlag(FLAGS_max_connection_idle_seconds);
  options.max_connection_age_seconds =
      absl::GetFlag(FLAGS_max_connection_age_seconds);
  options.max_connection_age_grace_seconds =
      absl::GetFlag(FLAGS_max_connection_age_grace_seconds);
  options.grpc_memory_bytes = absl::GetFlag(FLAGS_grpc_memory_bytes);
  options.drain_seconds = absl::GetFlag(FLAGS_drain_seconds);
  options.lame_duck_seconds = absl::GetFlag(FLAGS_lame_duck_seconds);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key_file);
  options.tls_ca_file = absl::GetFlag(FLAGS_tls_ca_file);
  options.shadow_queue_capacity = absl::GetFlag(FLAGS_shadow_queue_capacity);
  options.scoring_kernel = absl::GetFlag(FLAGS_scoring_kernel);
  options.impression_log_dir = absl::GetFlag(FLAGS_impression_log_dir);
  options.impression_log_fraction =
      absl::GetFlag(FLAGS_impression_log_fraction);
  options.impression_log_queue_capacity =
      absl::GetFlag(FLAGS_impression_log_queue_capacity);
  options.impression_log_max_file_bytes =
      absl::GetFlag(FLAGS_impression_log_max_file_bytes);
  options.impression_log_max_file_seconds =
      absl::GetFlag(FLAGS_impression_log_max_file_seconds);

  // Before any thread starts, so every thread inherits the mask and only
  // the loop below receives these signals.
  signal(SIGPIPE, SIG_IGN);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  plrank::server::RankingServer server(options);
  const absl::Status status = server.Start();
  if (!status.ok()) {
    std::fprintf(stderr, "plrank-server: %s\n",
                 std::string(status.message()).c_str());
    return 1;
  }
  // The loop wakes a few times a second to notice the end of the drain.
  while (!server.IsShutDown()) {
    const timespec tick = {0, 100 * 1000 * 1000};
    const int signal_number = sigtimedwait(&signals, nullptr, &tick);
    if (signal_number == SIGHUP) {
      server.Reload("SIGHUP");
    } else if (signal_number == SIGTERM || signal_number == SIGINT) {
      server.Shutdown(signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
    }
  }
  server.Wait();
  return 0;
}
