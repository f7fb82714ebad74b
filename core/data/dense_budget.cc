#include "core/data/dense_budget.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace plrank {
namespace {

// Keeps `best` the smallest known limit (-1 = none known yet).
void Tighten(int64_t limit, int64_t* best) {
  if (limit < 0) return;
  *best = *best < 0 ? limit : std::min(*best, limit);
}

int64_t MemAvailable() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  int64_t kb = 0;
  while (meminfo >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return -1;
}

int64_t CgroupHeadroom() {
  std::ifstream max_file("/sys/fs/cgroup/memory.max");
  std::ifstream current_file("/sys/fs/cgroup/memory.current");
  std::string max_text;
  int64_t max = 0, current = 0;
  if (!(max_file >> max_text) || !absl::SimpleAtoi(max_text, &max)) return -1;
  if (!(current_file >> current)) current = 0;
  return std::max<int64_t>(max - current, 0);
}

int64_t RlimitBytes(int resource) {
  rlimit limit{};
  if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return -1;
  }
  return static_cast<int64_t>(limit.rlim_cur);
}

}  // namespace

int64_t AvailableMemoryBytes() {
  int64_t best = -1;
  Tighten(MemAvailable(), &best);
  Tighten(CgroupHeadroom(), &best);
  // The rlimits cap the whole process, part of which is in use already, so
  // they bound what is left from above.
  Tighten(RlimitBytes(RLIMIT_AS), &best);
  Tighten(RlimitBytes(RLIMIT_DATA), &best);
  return best;
}

absl::Status CheckDenseMatrixFits(int64_t rows, int64_t columns,
                                  int64_t available, const std::string& name,
                                  const std::string& hint) {
  if (available < 0 || rows <= 0 || columns <= 0) return absl::OkStatus();
  const double bytes = static_cast<double>(rows) * static_cast<double>(columns) *
                       sizeof(float);
  if (bytes <= static_cast<double>(available)) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%s: the dense feature matrix needs %.2f GB (%d documents x %d "
      "features), more than the %.2f GB this process can allocate; %s",
      name, bytes / 1e9, rows, columns, static_cast<double>(available) / 1e9,
      hint));
}

}  // namespace plrank
