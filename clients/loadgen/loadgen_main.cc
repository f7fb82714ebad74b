// plrank-loadgen: asynchronous load generator for the Ranker Rank method,
// loopback targets only.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/cpp/ranker_client.h"
#include "clients/loadgen/load_generator.h"
#include "clients/loadgen/load_report.h"
#include "clients/loadgen/loopback_target.h"
#include "clients/loadgen/request_pool.h"
#include "common/program.h"
#include "core/data/file_io.h"
#include "core/data/letor_reader.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

ABSL_FLAG(std::string, target, "", "Server address on loopback, HOST:PORT.");
ABSL_FLAG(std::string, model, "", "Model name.");
ABSL_FLAG(int64_t, model_version, 0, "Pin this model version (0 = default).");
ABSL_FLAG(std::string, label, "", "Use the version with this label.");
ABSL_FLAG(std::string, data, "",
          "LETOR file: one request per query, cycled. Default: synthetic.");
ABSL_FLAG(int32_t, synthetic_docs, 100, "Documents per synthetic request.");
ABSL_FLAG(int32_t, synthetic_requests, 16, "Distinct synthetic requests.");
ABSL_FLAG(int32_t, features, 0,
          "Features per document; 0 = the model's (asks GetModelMetadata).");
ABSL_FLAG(uint32_t, top_k, 0, "top_k of every request (0 = all documents).");
ABSL_FLAG(int32_t, concurrency, 8, "Closed loop: calls kept in flight.");
ABSL_FLAG(double, rate, 0,
          "Open loop: send at this fixed QPS instead (ignores --concurrency).");
ABSL_FLAG(int32_t, max_in_flight, 10000, "Open loop: cap on calls in flight.");
ABSL_FLAG(int64_t, requests, 10000, "Stop after this many requests...");
ABSL_FLAG(double, duration_seconds, 10, "...or after this long, if sooner.");
ABSL_FLAG(int64_t, warmup_requests, 0,
          "Closed-loop calls sent first and left out of the report.");
ABSL_FLAG(double, deadline_ms, 5000, "Deadline of each call.");
ABSL_FLAG(double, connect_timeout_seconds, 5, "Wait this long to connect.");
ABSL_FLAG(std::string, json_out, "", "Also write the report as JSON here.");

namespace {

constexpr char kUsage[] =
    "Load generator for a plrank-server on this machine's loopback.\n"
    "  plrank-loadgen --target=127.0.0.1:PORT --model=NAME "
    "[--data=FILE | --synthetic_docs=100 --features=136]\n"
    "      [--concurrency=8 | --rate=QPS] [--requests=N] [--duration_seconds=S] "
    "[--json_out=F]";

int Fail(const absl::Status& status, int exit_code = 1) {
  std::fprintf(stderr, "plrank-loadgen: error: %s\n",
               std::string(status.message()).c_str());
  return exit_code;
}

absl::Status ParseFlags(int argc, char** argv) {
  std::vector<char*> positional = plrank::ParseProgramFlags(argc, argv, kUsage);
  if (positional.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unexpected argument(s): ",
        absl::StrJoin(positional.begin() + 1, positional.end(), " "),
        " (see --help)"));
  }
  return absl::OkStatus();
}

// 64 Mi float values (256 MiB) of synthetic requests: far more than any
// realistic load pattern needs.
constexpr int64_t kMaxSyntheticValues = int64_t{1} << 26;
constexpr double kMaxConnectTimeoutSeconds = 3600;

absl::StatusOr<plrank::loadgen::LoadOptions> LoadOptionsFromFlags() {
  plrank::loadgen::LoadOptions options;
  options.concurrency = absl::GetFlag(FLAGS_concurrency);
  options.rate_qps = absl::GetFlag(FLAGS_rate);
  options.max_in_flight = absl::GetFlag(FLAGS_max_in_flight);
  options.max_requests = absl::GetFlag(FLAGS_requests);
  const double duration = absl::GetFlag(FLAGS_duration_seconds);
  const double deadline_ms = absl::GetFlag(FLAGS_deadline_ms);
  if (options.concurrency < 1) {
    return absl::InvalidArgumentError("--concurrency must be >= 1");
  }
  // Written so that NaN is refused (it passed `rate < 0` and ran closed loop).
  if (!(options.rate_qps >= 0 && std::isfinite(options.rate_qps)) ||
      options.max_in_flight < 1) {
    return absl::InvalidArgumentError(
        "--rate must be finite and >= 0 and --max_in_flight >= 1");
  }
  // Both bounds are required so that no run is ever unbounded.
  if (options.max_requests < 1 || !(duration > 0)) {
    return absl::InvalidArgumentError(
        "--requests and --duration_seconds must both be positive");
  }
  if (!(deadline_ms > 0)) {
    return absl::InvalidArgumentError("--deadline_ms must be positive");
  }
  options.max_duration = absl::Seconds(duration);
  options.call_deadline = absl::Milliseconds(deadline_ms);
  return options;
}

// The width requests must have: --features, else the served model's.
absl::StatusOr<int32_t> FeatureCount(plrank::RankerClient& client,
                                     const plrank::ModelRef& model) {
  if (absl::GetFlag(FLAGS_features) > 0) return absl::GetFlag(FLAGS_features);
  if (absl::GetFlag(FLAGS_features) < 0) {
    return absl::InvalidArgumentError("--features must be >= 0");
  }
  absl::StatusOr<plrank::v1::GetModelMetadataResponse> metadata =
      client.GetModelMetadata(model);
  if (!metadata.ok()) {
    return absl::Status(metadata.status().code(),
                        absl::StrCat("GetModelMetadata (to learn the feature "
                                     "count; or pass --features): ",
                                     metadata.status().message()));
  }
  if (metadata->num_features() == 0) {
    return absl::FailedPreconditionError(
        "the server reports no feature count; pass --features");
  }
  return static_cast<int32_t>(metadata->num_features());
}

int Run() {
  const std::string target = absl::GetFlag(FLAGS_target);
  if (target.empty()) {
    return Fail(absl::InvalidArgumentError("--target=127.0.0.1:PORT is required"), 2);
  }
  // First, before anything touches the network.
  if (absl::Status loopback = plrank::loadgen::CheckLoopbackTarget(target);
      !loopback.ok()) {
    return Fail(loopback, 2);
  }
  plrank::ModelRef model;
  model.name = absl::GetFlag(FLAGS_model);
  model.version = absl::GetFlag(FLAGS_model_version);
  model.label = absl::GetFlag(FLAGS_label);
  if (model.name.empty()) {
    return Fail(absl::InvalidArgumentError("--model=NAME is required"), 2);
  }
  absl::StatusOr<plrank::loadgen::LoadOptions> options = LoadOptionsFromFlags();
  if (!options.ok()) return Fail(options.status(), 2);

  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(64 << 20);
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
      target, grpc::InsecureChannelCredentials(), arguments);
  const double connect_timeout = absl::GetFlag(FLAGS_connect_timeout_seconds);
  if (!(connect_timeout > 0 && connect_timeout <= kMaxConnectTimeoutSeconds)) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
                    "--connect_timeout_seconds must be in (0, ",
                    kMaxConnectTimeoutSeconds, "], got ", connect_timeout)),
                2);
  }
  if (!channel->WaitForConnected(
          std::chrono::system_clock::now() +
          std::chrono::milliseconds(static_cast<int64_t>(connect_timeout * 1e3)))) {
    return Fail(absl::UnavailableError(absl::StrCat(
        "cannot connect to ", target, " within ", connect_timeout,
        " s (is the server running on that port?)")));
  }
  plrank::RankerClient client(channel, plrank::RankerClientOptions());
  absl::StatusOr<int32_t> features = FeatureCount(client, model);
  if (!features.ok()) return Fail(features.status());

  const uint32_t top_k = absl::GetFlag(FLAGS_top_k);
  plrank::loadgen::RequestPool pool;
  if (const std::string path = absl::GetFlag(FLAGS_data); !path.empty()) {
    plrank::ReadOptions read_options;
    read_options.num_features = *features;
    absl::StatusOr<plrank::Dataset> data =
        plrank::ReadLetorFile(path, read_options);
    if (!data.ok()) return Fail(data.status());
    if (data->num_queries() == 0) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(path, ": no queries")));
    }
    pool = plrank::loadgen::RequestsFromDataset(*data, model, top_k);
  } else {
    const int32_t docs = absl::GetFlag(FLAGS_synthetic_docs);
    const int32_t count = absl::GetFlag(FLAGS_synthetic_requests);
    if (docs < 1 || count < 1) {
      return Fail(absl::InvalidArgumentError(
                      "--synthetic_docs and --synthetic_requests must be >= 1"),
                  2);
    }
    // The pool is built in memory before the first call: bound it rather
    // than let a typo allocate (or try to) terabytes.
    const double values = static_cast<double>(docs) * count * *features;
    if (values > kMaxSyntheticValues) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
                      "--synthetic_requests x --synthetic_docs x features = ",
                      count, " x ", docs, " x ", *features, " = ", values,
                      " feature values, above the limit of ",
                      kMaxSyntheticValues, " (", kMaxSyntheticValues * 4 >> 20,
                      " MiB); use fewer requests or documents")),
                  2);
    }
    pool = plrank::loadgen::SyntheticRequests(count, docs, *features, model, top_k);
  }

  if (const int64_t warmup = absl::GetFlag(FLAGS_warmup_requests); warmup > 0) {
    plrank::loadgen::LoadOptions warmup_options = *options;
    warmup_options.rate_qps = 0;
    warmup_options.max_requests = warmup;
    plrank::loadgen::RunRankLoad(channel, pool.requests, warmup_options);
  }
  const plrank::loadgen::LoadResult result =
      plrank::loadgen::RunRankLoad(channel, pool.requests, *options);

  plrank::loadgen::LoadDescription description;
  description.target = target;
  description.model = model.name;
  description.mode = options->rate_qps > 0 ? "open_loop" : "closed_loop";
  description.concurrency = options->rate_qps > 0 ? 0 : options->concurrency;
  description.rate_qps = options->rate_qps;
  description.documents_per_request = pool.documents_per_request;
  description.features = *features;
  std::fputs(plrank::loadgen::FormatLoadText(description, result).c_str(), stdout);
  if (const std::string json = absl::GetFlag(FLAGS_json_out); !json.empty()) {
    if (absl::Status status = plrank::WriteFileAtomically(
            json, plrank::loadgen::FormatLoadJson(description, result));
        !status.ok()) {
      return Fail(status);
    }
  }
  if (result.ok == 0) {
    return Fail(absl::UnavailableError("no call succeeded (see errors above)"));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (absl::Status status = ParseFlags(argc, argv); !status.ok()) {
    return Fail(status, 2);
  }
  return Run();
}
