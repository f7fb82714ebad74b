#include "server/server_metrics.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "server/lifecycle/servable_version.h"

namespace plrank::server {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using Buckets = prometheus::Histogram::BucketBoundaries;

// 100 us .. ~13 s, x2 steps: Rank latencies sit at the low end, large
// Evaluate calls and model loads at the high end.
const Buckets& LatencyBuckets() {
  static const Buckets* const buckets = [] {
    auto* out = new Buckets;
    for (double b = 0.0001; b < 15.0; b *= 2.0) out->push_back(b);
    return out;
  }();
  return *buckets;
}

const Buckets& DocumentBuckets() {
  static const Buckets* const buckets =
      new Buckets{1,    2,    5,    10,    20,     50,     100,    200,
                  500,  1000, 2000, 5000,  10000,  100000, 1000000};
  return *buckets;
}

// Kendall tau: fine steps near 1, where healthy shadows sit.
const Buckets& TauBuckets() {
  static const Buckets* const buckets = new Buckets{
      -0.5, 0.0, 0.25, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 1.0};
  return *buckets;
}

// Top-10 overlap: shares of 10 documents (exact for k = 10).
const Buckets& OverlapBuckets() {
  static const Buckets* const buckets =
      new Buckets{0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  return *buckets;
}

}  // namespace

ServerMetrics::ServerMetrics(absl::string_view build_version)
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(BuildCounter()
                    .Name("plrank_requests_total")
                    .Help("RPCs handled, by method, model, version and gRPC "
                          "status code")
                    .Register(*registry_)),
      protocol_requests_(BuildCounter()
                             .Name("plrank_protocol_requests_total")
                             .Help("Requests handled, by protocol (grpc, "
                                   "http), method and status code")
                             .Register(*registry_)),
      request_duration_(BuildHistogram()
                            .Name("plrank_request_duration_seconds")
                            .Help("RPC handling time, validation and scoring "
                                  "included")
                            .Register(*registry_)),
      scoring_duration_(BuildHistogram()
                            .Name("plrank_scoring_duration_seconds")
                            .Help("Time spent in the forest scorer per RPC")
                            .Register(*registry_)),
      explain_duration_(BuildHistogram()
                            .Name("plrank_explain_duration_seconds")
                            .Help("Time an Explain RPC spent computing "
                                  "feature contributions (TreeSHAP), "
                                  "validation and scoring included")
                            .Register(*registry_)),
      documents_(BuildHistogram()
                     .Name("plrank_documents_per_request")
                     .Help("Documents scored per RPC")
                     .Register(*registry_)),
      versions_loaded_(BuildGauge()
                           .Name("plrank_model_versions_loaded")
                           .Help("Versions of the model currently serving")
                           .Register(*registry_)),
      loads_(BuildCounter()
                 .Name("plrank_model_loads_total")
                 .Help("Model version load attempts by result")
                 .Register(*registry_)),
      load_duration_(BuildHistogram()
                         .Name("plrank_model_load_duration_seconds")
                         .Help("Time to read, validate and warm up a version")
                         .Register(*registry_)),
      version_info_(BuildGauge()
                        .Name("plrank_model_version_info")
                        .Help("1 for every serving version, with its "
                              "objective and checksum")
                        .Register(*registry_)),
      version_created_(
          BuildGauge()
              .Name("plrank_model_version_created_timestamp_seconds")
              .Help("Unix time the serving version was trained")
              .Register(*registry_)),
      version_loaded_(BuildGauge()
                          .Name("plrank_model_version_loaded_timestamp_seconds")
                          .Help("Unix time the serving version was loaded")
                          .Register(*registry_)),
      version_memory_(BuildGauge()
                          .Name("plrank_model_version_memory_bytes")
                          .Help("Heap memory a loaded version holds "
                                "(measured around its load)")
                          .Register(*registry_)),
      promotions_refused_(
          BuildCounter()
              .Name("plrank_model_promotions_refused_total")
              .Help("Newer versions kept from becoming the default because "
                    "they are incompatible with the serving version, by "
                    "reason")
              .Register(*registry_)),
      build_info_(BuildGauge()
                      .Name("plrank_build_info")
                      .Help("1, labelled with the server's version")
                      .Register(*registry_)),
      shadow_requests_(
          BuildCounter()
              .Name("plrank_shadow_requests_total")
              .Help("Sampled shadow copies of Rank queries, by result: "
                    "scored, dropped (queue full) or failed")
              .Register(*registry_)),
      shadow_tau_(BuildHistogram()
                      .Name("plrank_shadow_kendall_tau")
                      .Help("Kendall tau-b between the served ranking and the "
                            "shadow version's ranking of the same documents")
                      .Register(*registry_)),
      shadow_top1_(BuildCounter()
                       .Name("plrank_shadow_top1_agreements_total")
                       .Help("Scored shadow copies whose top document is the "
                             "served one")
                       .Register(*registry_)),
      shadow_top10_(BuildHistogram()
                        .Name("plrank_shadow_top10_overlap")
                        .Help("Share of the top min(10, n) documents the "
                              "served and shadow rankings have in common")
                        .Register(*registry_)) {
  build_info_.Add({{"version", std::string(build_version)}}).Set(1);
}

void ServerMetrics::RecordProtocol(absl::string_view protocol,
                                   absl::string_view method,
                                   absl::string_view code) {
  protocol_requests_
      .Add({{"protocol", std::string(protocol)},
            {"method", std::string(method)},
            {"code", std::string(code)}})
      .Increment();
}

void ServerMetrics::RecordRequest(absl::string_view method,
                                  const std::string& model,
                                  const std::string& version,
                                  absl::string_view code, double seconds,
                                  uint64_t documents) {
  const std::string method_label(method);
  requests_
      .Add({{"method", method_label},
            {"model", model},
            {"version", version},
            {"code", std::string(code)}})
      .Increment();
  request_duration_.Add({{"method", method_label}, {"model", model}},
                        LatencyBuckets())
      .Observe(seconds);
  if (documents > 0) {
    documents_.Add({{"method", method_label}, {"model", model}},
                   DocumentBuckets())
        .Observe(static_cast<double>(documents));
  }
}

void ServerMetrics::RecordScoring(const std::string& model,
                                  const std::string& version, double seconds) {
  scoring_duration_.Add({{"model", model}, {"version", version}},
                        LatencyBuckets())
      .Observe(seconds);
}

void ServerMetrics::RecordExplain(const std::string& model, double seconds) {
  explain_duration_.Add({{"model", model}}, LatencyBuckets()).Observe(seconds);
}

void ServerMetrics::OnModelLoad(const std::string& model, bool success,
                                double seconds) {
  loads_.Add({{"model", model}, {"result", success ? "success" : "failure"}})
      .Increment();
  if (success) {
    load_duration_.Add({{"model", model}}, LatencyBuckets()).Observe(seconds);
  }
}

void ServerMetrics::OnVersionsLoaded(const std::string& model, int64_t count) {
  versions_loaded_.Add({{"model", model}}).Set(static_cast<double>(count));
}

void ServerMetrics::OnVersionAvailable(const ServableVersion& version) {
  const std::string version_label = version.version_string();
  VersionGauges gauges;
  gauges.info = &version_info_.Add({{"model", version.model()},
                                    {"version", version_label},
                                    {"objective", version.metadata().objective},
                                    {"checksum", version.metadata().checksum}});
  gauges.info->Set(1);
  gauges.created = &version_created_.Add(
      {{"model", version.model()}, {"version", version_label}});
  gauges.created->Set(
      static_cast<double>(version.metadata().created_unix_seconds));
  gauges.loaded = &version_loaded_.Add(
      {{"model", version.model()}, {"version", version_label}});
  gauges.loaded->Set(static_cast<double>(version.loaded_unix_seconds()));
  gauges.memory = &version_memory_.Add(
      {{"model", version.model()}, {"version", version_label}});
  gauges.memory->Set(static_cast<double>(version.metadata().memory_bytes));
  std::lock_guard<std::mutex> lock(mutex_);
  version_gauges_[{version.model(), version.version()}] = gauges;
  ++live_versions_[{version.model(), version.version()}];
}

void ServerMetrics::OnVersionUnloaded(const std::string& model,
                                      int64_t version) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = version_gauges_.find({model, version});
  if (it == version_gauges_.end()) return;
  version_info_.Remove(it->second.info);
  version_created_.Remove(it->second.created);
  version_loaded_.Remove(it->second.loaded);
  version_memory_.Remove(it->second.memory);
  version_gauges_.erase(it);
}

void ServerMetrics::RecordShadowRequest(const std::string& model,
                                        const std::string& version,
                                        const std::string& shadow_version,
                                        const char* result) {
  shadow_requests_
      .Add({{"model", model},
            {"version", version},
            {"shadow_version", shadow_version},
            {"result", result}})
      .Increment();
}

void ServerMetrics::RecordShadowComparison(const std::string& model,
                                           const std::string& version,
                                           const std::string& shadow_version,
                                           std::optional<double> kendall_tau,
                                           bool top1_agree,
                                           double top10_overlap) {
  const prometheus::Labels labels = {{"model", model},
                                     {"version", version},
                                     {"shadow_version", shadow_version}};
  if (kendall_tau.has_value()) {
    shadow_tau_.Add(labels, TauBuckets()).Observe(*kendall_tau);
  }
  prometheus::Counter& agreements = shadow_top1_.Add(labels);
  if (top1_agree) agreements.Increment();
  shadow_top10_.Add(labels, OverlapBuckets()).Observe(top10_overlap);
}

void ServerMetrics::OnPromotionRefused(const std::string& model,
                                       const std::string& reason) {
  promotions_refused_.Add({{"model", model}, {"reason", reason}}).Increment();
}

namespace {

// Every label set of `family` with model = `model` and `label` = `version`.
template <typename T>
std::vector<prometheus::Labels> VersionSeries(
    const prometheus::Family<T>& family, const std::string& model,
    const std::string& version, const char* label) {
  std::vector<prometheus::Labels> out;
  for (const prometheus::MetricFamily& collected : family.Collect()) {
    for (const prometheus::ClientMetric& metric : collected.metric) {
      prometheus::Labels labels;
      for (const auto& label : metric.label) labels[label.name] = label.value;
      auto m = labels.find("model");
      auto v = labels.find(label);
      if (m != labels.end() && m->second == model && v != labels.end() &&
          v->second == version) {
        out.push_back(std::move(labels));
      }
    }
  }
  return out;
}

// Removes those series. `bucket_args` are what Add needs besides the labels
// (histogram buckets); Add returns the existing series.
template <typename T, typename... BucketArgs>
void RemoveVersionSeries(prometheus::Family<T>& family,
                         const std::string& model, const std::string& version,
                         const char* label, const BucketArgs&... bucket_args) {
  for (const prometheus::Labels& labels :
       VersionSeries(family, model, version, label)) {
    family.Remove(&family.Add(labels, bucket_args...));
  }
}

}  // namespace

void ServerMetrics::OnVersionReleased(const std::string& model,
                                      int64_t version) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_versions_.find({model, version});
    if (it != live_versions_.end() && --it->second > 0) return;
    if (it != live_versions_.end()) live_versions_.erase(it);
  }
  // No request can add to these series any more: the version is neither
  // servable nor held by a request.
  const std::string label = absl::StrCat(version);
  RemoveVersionSeries(requests_, model, label, "version");
  RemoveVersionSeries(scoring_duration_, model, label, "version",
                      LatencyBuckets());
  // Shadow series name the version as the served one or as the shadow.
  for (const char* which : {"version", "shadow_version"}) {
    RemoveVersionSeries(shadow_requests_, model, label, which);
    RemoveVersionSeries(shadow_top1_, model, label, which);
    RemoveVersionSeries(shadow_tau_, model, label, which, TauBuckets());
    RemoveVersionSeries(shadow_top10_, model, label, which, OverlapBuckets());
  }
}

}  // namespace plrank::server
