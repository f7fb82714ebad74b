#include "server/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "prometheus/client_metric.h"
#include "server/lifecycle/structured_log.h"

namespace plrank::server {
namespace {

std::optional<std::string> ReadFile(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

prometheus::MetricFamily Family(const char* name, const char* help,
                                prometheus::MetricType type, double value) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(metric);
  return family;
}

// Seconds since boot at which the system booted, from /proc/stat's btime.
std::optional<double> BootTime() {
  const std::optional<std::string> stat = ReadFile("/proc/stat");
  if (!stat) return std::nullopt;
  for (absl::string_view line : absl::StrSplit(*stat, '\n')) {
    if (absl::ConsumePrefix(&line, "btime ")) {
      double seconds = 0;
      if (absl::SimpleAtod(line, &seconds)) return seconds;
    }
  }
  return std::nullopt;
}

// Fields of /proc/self/stat, in clock ticks (times) or bytes/pages.
struct SelfStat {
  double utime = 0, stime = 0, start = 0, vsize = 0, rss = 0;
};

// /proc/self/stat: fields after the parenthesised command name, which may
// itself contain spaces; utime is field 14, stime 15, starttime 22, vsize 23,
// rss 24 (1-based over the whole line).
std::optional<SelfStat> ReadSelfStat() {
  const std::optional<std::string> stat = ReadFile("/proc/self/stat");
  if (!stat) return std::nullopt;
  const size_t close = stat->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  const std::vector<absl::string_view> fields = absl::StrSplit(
      absl::string_view(*stat).substr(close + 1), ' ', absl::SkipEmpty());
  // fields[0] is field 3 (state).
  auto field = [&](size_t number, double* value) {
    return number - 3 < fields.size() &&
           absl::SimpleAtod(fields[number - 3], value);
  };
  SelfStat parsed;
  if (!field(14, &parsed.utime) || !field(15, &parsed.stime) ||
      !field(22, &parsed.start) || !field(23, &parsed.vsize) ||
      !field(24, &parsed.rss)) {
    return std::nullopt;
  }
  return parsed;
}

}  // namespace

ProcessMetrics::ProcessMetrics() {
  // The start time never changes: read once, not at every scrape.
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const std::optional<SelfStat> stat = ReadSelfStat();
  const std::optional<double> boot = BootTime();
  if (stat && boot && ticks > 0)
    start_time_seconds_ = *boot + stat->start / ticks;
}

std::vector<prometheus::MetricFamily> ProcessMetrics::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  if (const std::optional<SelfStat> stat = ReadSelfStat()) {
    if (ticks > 0) {
      families.push_back(
          Family("process_cpu_seconds_total",
                 "Total user and system CPU time spent in seconds.",
                 MetricType::Counter, (stat->utime + stat->stime) / ticks));
    }
    if (page > 0) {
      families.push_back(Family("process_resident_memory_bytes",
                                "Resident memory size in bytes.",
                                MetricType::Gauge, stat->rss * page));
    }
    families.push_back(Family("process_virtual_memory_bytes",
                              "Virtual memory size in bytes.",
                              MetricType::Gauge, stat->vsize));
  }
  if (start_time_seconds_) {
    families.push_back(
        Family("process_start_time_seconds",
               "Start time of the process since unix epoch in seconds.",
               MetricType::Gauge, *start_time_seconds_));
  }
  std::error_code error;
  size_t open_fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", error), end;
       !error && it != end; it.increment(error)) {
    ++open_fds;
  }
  if (!error) {
    families.push_back(
        Family("process_open_fds", "Number of open file descriptors.",
               MetricType::Gauge, static_cast<double>(open_fds)));
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 &&
      limit.rlim_cur != RLIM_INFINITY) {
    families.push_back(
        Family("process_max_fds", "Maximum number of open file descriptors.",
               MetricType::Gauge, static_cast<double>(limit.rlim_cur)));
  }
  families.push_back(Family(
      "plrank_log_write_failures_total",
      "Log lines dropped because stderr refused them (closed, or a pipe "
      "whose reader went away).",
      MetricType::Counter, static_cast<double>(LogWriteFailures())));
  return families;
}

}  // namespace plrank::server
