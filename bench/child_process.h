#ifndef PLRANK_BENCH_CHILD_PROCESS_H_
#define PLRANK_BENCH_CHILD_PROCESS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace plrank::bench {

// What one finished child process cost. Peak RSS comes from wait4()'s
// rusage, so it is the child's own high-water mark, unaffected by the
// benchmark driver's memory.
struct ChildRun {
  int exit_code = -1;        // -1 when killed by a signal
  int term_signal = 0;       // the signal, when killed
  double wall_seconds = 0;   // fork to reap, monotonic clock
  int64_t peak_rss_kb = 0;   // ru_maxrss
  std::string stdout_text;   // everything the child wrote to stdout
};

// Runs argv[0] (a path, not searched in PATH) with the given arguments,
// stdout captured into `stdout_path` (and returned), stderr into
// `stderr_path`. Fails only when the process cannot be started; a non-zero
// exit is reported in the result.
absl::StatusOr<ChildRun> RunChild(const std::vector<std::string>& argv,
                                  const std::string& stdout_path,
                                  const std::string& stderr_path);

// The value of the last line "key=<number>" in `text`, or -1 when absent.
double ReportedValue(const std::string& text, const std::string& key);

// Warns on stderr when the 1-minute load average exceeds `busy_load`: on a
// 2-core machine other work inflates wall times, and OpenMP programs (both
// PLRank and XGBoost) suffer most, as their threads wait at barriers.
// Returns the load average, for the report.
double WarnIfMachineBusy(double busy_load);

// Last few lines of a text file, for error messages.
std::string TailOfFile(const std::string& path, int max_lines);

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_CHILD_PROCESS_H_
