#ifndef PLRANK_CLIENTS_LOADGEN_LOAD_REPORT_H_
#define PLRANK_CLIENTS_LOADGEN_LOAD_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace plrank::loadgen {

// What one load run measured. Latencies are of successful calls only, in
// microseconds, one sample per call (percentiles are exact, not bucketed).
struct LoadResult {
  int64_t sent = 0;
  int64_t ok = 0;
  std::map<std::string, int64_t> errors_by_code;  // "UNAVAILABLE" -> count
  double elapsed_seconds = 0;  // first send to last completion
  std::vector<double> latencies_us;
  // Open loop: sends issued more than 1 ms after their scheduled time (the
  // client could not keep up; their latency still counts from the schedule).
  int64_t late_sends = 0;
};

// Exact nearest-rank percentile (p in [0, 100]) of sorted samples; NaN when
// empty.
double Percentile(const std::vector<double>& sorted, double p);

// Describes the run: the settings, for the report's header and JSON.
struct LoadDescription {
  std::string target;
  std::string model;
  std::string mode;  // "closed_loop" or "open_loop"
  int32_t concurrency = 0;
  double rate_qps = 0;
  double documents_per_request = 0;
  int32_t features = 0;
};

// Human-readable report (QPS, latency percentiles, errors by code).
std::string FormatLoadText(const LoadDescription& description,
                           const LoadResult& result);
// The same as one JSON object.
std::string FormatLoadJson(const LoadDescription& description,
                           const LoadResult& result);

}  // namespace plrank::loadgen

#endif  // PLRANK_CLIENTS_LOADGEN_LOAD_REPORT_H_
