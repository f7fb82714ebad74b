#include "clients/loadgen/load_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace plrank::loadgen {
namespace {

struct Summary {
  double qps = 0;     // completed calls (ok or not) per second
  double ok_qps = 0;  // successful calls per second
  int64_t errors = 0;
  double mean = 0, min = 0, max = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0;
};

Summary Summarize(const LoadResult& result) {
  Summary s;
  for (const auto& [code, count] : result.errors_by_code) s.errors += count;
  if (result.elapsed_seconds > 0) {
    s.qps = (result.ok + s.errors) / result.elapsed_seconds;
    s.ok_qps = result.ok / result.elapsed_seconds;
  }
  std::vector<double> sorted = result.latencies_us;
  std::sort(sorted.begin(), sorted.end());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  s.mean = s.min = s.max = nan;
  if (!sorted.empty()) {
    double sum = 0;
    for (double v : sorted) sum += v;
    s.mean = sum / sorted.size();
    s.min = sorted.front();
    s.max = sorted.back();
  }
  s.p50 = Percentile(sorted, 50);
  s.p90 = Percentile(sorted, 90);
  s.p99 = Percentile(sorted, 99);
  s.p999 = Percentile(sorted, 99.9);
  return s;
}

// JSON has no NaN: an absent measurement is null.
std::string JsonNumber(double value) {
  return std::isfinite(value) ? absl::StrFormat("%.6g", value) : "null";
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  // Nearest rank: the smallest sample with at least p% of samples <= it.
  const double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

std::string FormatLoadText(const LoadDescription& d, const LoadResult& r) {
  const Summary s = Summarize(r);
  std::string text = absl::StrFormat(
      "target %s  model %s  %s", d.target, d.model, d.mode);
  if (d.mode == "open_loop") {
    absl::StrAppendFormat(&text, " at %.1f QPS\n", d.rate_qps);
  } else {
    absl::StrAppendFormat(&text, " with %d in flight\n", d.concurrency);
  }
  absl::StrAppendFormat(&text,
                        "requests: %d sent, %d ok, %d errors in %.3f s "
                        "(%.1f documents x %d features each)\n",
                        r.sent, r.ok, s.errors, r.elapsed_seconds,
                        d.documents_per_request, d.features);
  absl::StrAppendFormat(&text, "throughput: %.1f QPS (%.1f ok QPS)\n", s.qps,
                        s.ok_qps);
  absl::StrAppendFormat(&text,
                        "latency ms: p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  "
                        "mean %.3f  min %.3f  max %.3f\n",
                        s.p50 / 1e3, s.p90 / 1e3, s.p99 / 1e3, s.p999 / 1e3,
                        s.mean / 1e3, s.min / 1e3, s.max / 1e3);
  if (d.mode == "open_loop") {
    absl::StrAppendFormat(&text, "late sends (>1 ms behind schedule): %d\n",
                          r.late_sends);
  }
  if (!r.errors_by_code.empty()) {
    std::vector<std::string> parts;
    for (const auto& [code, count] : r.errors_by_code) {
      parts.push_back(absl::StrCat(code, " ", count));
    }
    absl::StrAppend(&text, "errors: ", absl::StrJoin(parts, ", "), "\n");
  }
  return text;
}

std::string FormatLoadJson(const LoadDescription& d, const LoadResult& r) {
  const Summary s = Summarize(r);
  std::vector<std::string> errors;
  for (const auto& [code, count] : r.errors_by_code) {
    errors.push_back(absl::StrCat(JsonString(code), ": ", count));
  }
  return absl::StrCat(
      "{\n",
      "  \"target\": ", JsonString(d.target), ",\n",
      "  \"model\": ", JsonString(d.model), ",\n",
      "  \"mode\": ", JsonString(d.mode), ",\n",
      "  \"concurrency\": ", d.concurrency, ",\n",
      "  \"rate_qps\": ", JsonNumber(d.rate_qps), ",\n",
      "  \"documents_per_request\": ", JsonNumber(d.documents_per_request), ",\n",
      "  \"features\": ", d.features, ",\n",
      "  \"sent\": ", r.sent, ",\n",
      "  \"ok\": ", r.ok, ",\n",
      "  \"errors\": ", s.errors, ",\n",
      "  \"errors_by_code\": {", absl::StrJoin(errors, ", "), "},\n",
      "  \"late_sends\": ", r.late_sends, ",\n",
      "  \"elapsed_seconds\": ", JsonNumber(r.elapsed_seconds), ",\n",
      "  \"qps\": ", JsonNumber(s.qps), ",\n",
      "  \"ok_qps\": ", JsonNumber(s.ok_qps), ",\n",
      "  \"latency_ms\": {\"p50\": ", JsonNumber(s.p50 / 1e3),
      ", \"p90\": ", JsonNumber(s.p90 / 1e3),
      ", \"p99\": ", JsonNumber(s.p99 / 1e3),
      ", \"p99.9\": ", JsonNumber(s.p999 / 1e3),
      ", \"mean\": ", JsonNumber(s.mean / 1e3),
      ", \"min\": ", JsonNumber(s.min / 1e3),
      ", \"max\": ", JsonNumber(s.max / 1e3), "}\n",
      "}\n");
}

}  // namespace plrank::loadgen
