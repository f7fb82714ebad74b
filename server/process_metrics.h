#ifndef PLRANK_SERVER_PROCESS_METRICS_H_
#define PLRANK_SERVER_PROCESS_METRICS_H_

#include <optional>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace plrank::server {

// The standard Prometheus process metrics, read from /proc/self at scrape
// time (prometheus-cpp has no process collector):
//   process_cpu_seconds_total          counter  user + system CPU time
//   process_resident_memory_bytes      gauge
//   process_virtual_memory_bytes       gauge
//   process_start_time_seconds         gauge    unix time
//   process_open_fds                   gauge
//   process_max_fds                    gauge    soft RLIMIT_NOFILE
// and the server's own process-wide counter:
//   plrank_log_write_failures_total    counter  log lines stderr refused
// A value that cannot be read (e.g. no /proc) is left out rather than
// reported as 0. Thread-safe.
class ProcessMetrics : public prometheus::Collectable {
 public:
  ProcessMetrics();

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::optional<double> start_time_seconds_;  // unix time; read once
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_PROCESS_METRICS_H_
