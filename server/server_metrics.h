#ifndef PLRANK_SERVER_SERVER_METRICS_H_
#define PLRANK_SERVER_SERVER_METRICS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/lifecycle/lifecycle_observer.h"

namespace plrank::server {

// The server's Prometheus metrics (exposed by main on --metrics_port):
//   plrank_requests_total{method,model,version,code}            counter
//   plrank_protocol_requests_total{protocol,method,code}        counter
//     (protocol = grpc|http: the transport a request came in on; method is
//     the RPC's name in either, e.g. Rank, ModelInfer, ServerReady)
//   plrank_request_duration_seconds{method,model}               histogram
//   plrank_scoring_duration_seconds{model,version}              histogram
//   plrank_explain_duration_seconds{model}                      histogram
//   plrank_documents_per_request{method,model}                  histogram
//   plrank_model_versions_loaded{model}                         gauge
//   plrank_model_loads_total{model,result="success|failure"}    counter
//   plrank_model_load_duration_seconds{model}                   histogram
//   plrank_model_version_info{model,version,objective,checksum} gauge = 1
//   plrank_model_version_created_timestamp_seconds{model,version} gauge
//   plrank_model_version_loaded_timestamp_seconds{model,version}  gauge
//   plrank_model_version_memory_bytes{model,version}             gauge
//   plrank_model_promotions_refused_total{model,reason}         counter
//   plrank_build_info{version}                                  gauge = 1
//   plrank_shadow_requests_total{model,version,shadow_version,result}
//                                     counter, result = scored|dropped|failed
//   plrank_shadow_kendall_tau{model,version,shadow_version}     histogram
//   plrank_shadow_top1_agreements_total{model,version,shadow_version} counter
//   plrank_shadow_top10_overlap{model,version,shadow_version}   histogram
// (shadow scoring: `version` served the answer, `shadow_version` scored the
// copy, "unresolved" when the configured shadow could not be resolved).
// Model age is time() - plrank_model_version_created_timestamp_seconds (a
// timestamp, per Prometheus conventions, instead of a gauge that would need
// updating every second). Requests naming an unknown model are counted
// under model="_unknown" so callers cannot blow up label cardinality, and
// the series labelled with a version are dropped once that version is
// released (its last request ended), so reloads do not grow the exposition.
// Thread-safe.
class ServerMetrics final : public LifecycleObserver {
 public:
  explicit ServerMetrics(absl::string_view build_version);

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // `version` is "" when the request failed before a version was chosen.
  void RecordRequest(absl::string_view method, const std::string& model,
                     const std::string& version, absl::string_view code,
                     double seconds, uint64_t documents);
  // The transport of one request (`protocol` "grpc" or "http"), beside
  // RecordRequest's series (which stay protocol-free).
  void RecordProtocol(absl::string_view protocol, absl::string_view method,
                      absl::string_view code);
  void RecordScoring(const std::string& model, const std::string& version,
                     double seconds);
  // Time an OK Explain call spent validating, scoring and computing
  // contributions.
  void RecordExplain(const std::string& model, double seconds);

  // LifecycleObserver: the version manager's reports.
  void OnModelLoad(const std::string& model, bool success,
                   double seconds) override;
  void OnVersionsLoaded(const std::string& model, int64_t count) override;
  // A loaded version: its info/created/loaded gauges, until
  // OnVersionUnloaded. Each is paired with one OnVersionReleased.
  void OnVersionAvailable(const ServableVersion& version) override;
  void OnVersionUnloaded(const std::string& model, int64_t version) override;
  // The version object was freed: when no other loaded copy of the same
  // model version exists, every series labelled with it (requests, scoring
  // time) is removed.
  void OnVersionReleased(const std::string& model, int64_t version) override;
  // `reason`: num_features, num_outputs or score_transform.
  void OnPromotionRefused(const std::string& model,
                          const std::string& reason) override;
  // One sampled shadow copy: `result` is "scored", "dropped" or "failed".
  void RecordShadowRequest(const std::string& model,
                           const std::string& version,
                           const std::string& shadow_version,
                           const char* result);
  // The comparison of a scored copy (tau absent when undefined). The
  // agreement counter is created at 0, so a rate over it exists even when
  // the rankings never agree.
  void RecordShadowComparison(const std::string& model,
                              const std::string& version,
                              const std::string& shadow_version,
                              std::optional<double> kendall_tau,
                              bool top1_agree, double top10_overlap);

 private:
  struct VersionGauges {
    prometheus::Gauge* info;
    prometheus::Gauge* created;
    prometheus::Gauge* loaded;
    prometheus::Gauge* memory;
  };

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Counter>& protocol_requests_;
  prometheus::Family<prometheus::Histogram>& request_duration_;
  prometheus::Family<prometheus::Histogram>& scoring_duration_;
  prometheus::Family<prometheus::Histogram>& explain_duration_;
  prometheus::Family<prometheus::Histogram>& documents_;
  prometheus::Family<prometheus::Gauge>& versions_loaded_;
  prometheus::Family<prometheus::Counter>& loads_;
  prometheus::Family<prometheus::Histogram>& load_duration_;
  prometheus::Family<prometheus::Gauge>& version_info_;
  prometheus::Family<prometheus::Gauge>& version_created_;
  prometheus::Family<prometheus::Gauge>& version_loaded_;
  prometheus::Family<prometheus::Gauge>& version_memory_;
  prometheus::Family<prometheus::Counter>& promotions_refused_;
  prometheus::Family<prometheus::Gauge>& build_info_;
  prometheus::Family<prometheus::Counter>& shadow_requests_;
  prometheus::Family<prometheus::Histogram>& shadow_tau_;
  prometheus::Family<prometheus::Counter>& shadow_top1_;
  prometheus::Family<prometheus::Histogram>& shadow_top10_;

  std::mutex mutex_;  // guards version_gauges_ and live_versions_
  std::map<std::pair<std::string, int64_t>, VersionGauges> version_gauges_;
  // Loaded ServableVersion objects per model version (a version unloaded
  // and loaded again can briefly exist twice).
  std::map<std::pair<std::string, int64_t>, int> live_versions_;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_SERVER_METRICS_H_
