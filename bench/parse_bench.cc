// plrank-bench-parse: LETOR text parsing throughput on one core.
//
// Times plrank::ReadLetorFile (file to Dataset, best of N) and ParseLetor on
// a buffer already in memory (parsing alone), and XGBoost's own text loader
// (XGDMatrixCreateFromFile, "?format=libsvm", which understands qid:) on the
// same file. The process is pinned to one CPU so that any loader threads
// share a single core; the page cache is warm for every loader alike.

#include <omp.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/child_process.h"
#include "bench/synthetic_letor_text.h"
#include "common/program.h"
#include "core/data/file_io.h"
#include "core/data/letor_reader.h"

#ifdef PLRANK_HAVE_XGBOOST
#include "bench/xgb_call.h"
#endif

ABSL_FLAG(std::string, file, "",
          "LETOR file to parse (default: generate an MSLR-shaped one)");
ABSL_FLAG(int32_t, size_mb, 150, "size of the generated file");
ABSL_FLAG(int32_t, features, 136, "features of the generated file");
ABSL_FLAG(std::string, work_dir, "", "where to generate (default $TMPDIR or /tmp)");
ABSL_FLAG(bool, keep_file, false, "keep the generated file");
ABSL_FLAG(int32_t, repeats, 3, "timed runs per loader (the best counts)");
ABSL_FLAG(bool, pin_cpu, true, "restrict the process to one CPU");
ABSL_FLAG(bool, xgboost, true, "also time XGBoost's loader (when built in)");
ABSL_FLAG(double, target_mb_per_s, 150, "throughput target for ReadLetorFile");
ABSL_FLAG(std::string, out, "", "also write the markdown report here");

namespace plrank::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Wall time can be inflated by other processes on a shared machine; the
// CPU time the process spent (all its threads, user + system) cannot, and on
// an idle core the two agree for a single-threaded loader.
struct Timing {
  double wall_seconds = std::numeric_limits<double>::infinity();
  double cpu_seconds = std::numeric_limits<double>::infinity();
};

double ProcessCpuSeconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Best wall and best CPU time of `repeats` calls of `load`, or the first error.
template <typename Load>
absl::StatusOr<Timing> BestSeconds(int repeats, Load load) {
  Timing best;
  for (int r = 0; r < repeats; ++r) {
    const Clock::time_point start = Clock::now();
    const double cpu_start = ProcessCpuSeconds();
    if (absl::Status status = load(); !status.ok()) return status;
    best.cpu_seconds = std::min(best.cpu_seconds, ProcessCpuSeconds() - cpu_start);
    best.wall_seconds = std::min(
        best.wall_seconds, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

absl::StatusOr<Timing> TimeReadLetorFile(const std::string& path, int repeats,
                                         std::string* shape) {
  return BestSeconds(repeats, [&]() -> absl::Status {
    absl::StatusOr<Dataset> data = ReadLetorFile(path, ReadOptions{});
    if (!data.ok()) return data.status();
    *shape = absl::StrFormat("%d documents, %d queries, %d features",
                             data->num_documents(), data->num_queries(),
                             data->num_features);
    return absl::OkStatus();
  });
}

absl::StatusOr<Timing> TimeParseLetor(const std::string& path, int repeats) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  return BestSeconds(repeats, [&]() -> absl::Status {
    return ParseLetor(text, path, ReadOptions{}).status();
  });
}

#ifdef PLRANK_HAVE_XGBOOST
absl::StatusOr<Timing> TimeXgboostLoader(const std::string& path, int repeats) {
  const std::string uri = path + "?format=libsvm";
  return BestSeconds(repeats, [&]() -> absl::Status {
    DMatrixHandle raw = nullptr;
    PLRANK_XGB_RETURN_IF_ERROR(XGDMatrixCreateFromFile(uri.c_str(), 1, &raw));
    const DMatrixPtr matrix(raw);
    bst_ulong rows = 0;
    return XgbCall(XGDMatrixNumRow(matrix.get(), &rows), "XGDMatrixNumRow");
  });
}
#endif

int Main() {
  const int repeats = std::max(1, absl::GetFlag(FLAGS_repeats));
  if (absl::GetFlag(FLAGS_pin_cpu)) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(std::max(0, sched_getcpu()), &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0) {
      std::fprintf(stderr, "warning: could not pin to one CPU\n");
    }
  }
  omp_set_num_threads(1);
  const double load = WarnIfMachineBusy(1.5);

  std::string path = absl::GetFlag(FLAGS_file);
  const bool generated = path.empty();
  if (generated) {
    std::string dir = absl::GetFlag(FLAGS_work_dir);
    if (dir.empty()) dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
    path = absl::StrCat(dir, "/plrank-parse-bench-", getpid(), ".txt");
    std::fprintf(stderr, "writing %d MB to %s\n", absl::GetFlag(FLAGS_size_mb), path.c_str());
    absl::StatusOr<int64_t> bytes = WriteSyntheticLetorText(
        path, int64_t{absl::GetFlag(FLAGS_size_mb)} << 20, absl::GetFlag(FLAGS_features), 7);
    if (!bytes.ok()) {
      std::fprintf(stderr, "%s\n", std::string(bytes.status().message()).c_str());
      return 1;
    }
  }
  std::error_code error;
  const double megabytes = std::filesystem::file_size(path, error) / 1e6;
  if (error) {
    std::fprintf(stderr, "cannot stat %s\n", path.c_str());
    return 1;
  }
  // One untimed read warms the page cache for every loader alike.
  { std::ifstream warm(path, std::ios::binary); std::stringstream s; s << warm.rdbuf(); }

  int exit_code = 0;
  std::string shape;
  std::string md = "### LETOR parsing, one core\n\n";
  std::vector<std::pair<std::string, absl::StatusOr<Timing>>> rows;
  rows.emplace_back("plrank::ReadLetorFile (file to Dataset)",
                    TimeReadLetorFile(path, repeats, &shape));
  rows.emplace_back("plrank::ParseLetor (text already in memory)",
                    TimeParseLetor(path, repeats));
#ifdef PLRANK_HAVE_XGBOOST
  if (absl::GetFlag(FLAGS_xgboost)) {
    rows.emplace_back("XGBoost 1.7 XGDMatrixCreateFromFile (libsvm)",
                      TimeXgboostLoader(path, repeats));
  }
#endif
  absl::StrAppendFormat(&md, "%s: %.1f MB (%s), best of %d%s; load average at start %.2f.\n\n",
                        generated ? "generated MSLR-shaped file" : path, megabytes,
                        shape, repeats,
                        absl::GetFlag(FLAGS_pin_cpu) ? ", process pinned to one CPU" : "", load);
  md += "| loader | best wall s | best CPU s | MB/s (wall) | MB/s (CPU) |\n"
        "| --- | ---: | ---: | ---: | ---: |\n";
  for (const auto& [name, timing] : rows) {
    if (timing.ok()) {
      absl::StrAppendFormat(&md, "| %s | %.3f | %.3f | %.1f | %.1f |\n", name,
                            timing->wall_seconds, timing->cpu_seconds,
                            megabytes / timing->wall_seconds,
                            megabytes / timing->cpu_seconds);
    } else {
      absl::StrAppendFormat(&md, "| %s | failed: %s | | | |\n", name,
                            timing.status().message());
      exit_code = 1;
    }
  }
  md += "\n";
  if (rows[0].second.ok()) {
    // Judged on CPU time: "MB/s on one core" whatever else the machine runs.
    const double speed = megabytes / rows[0].second->cpu_seconds;
    const double target = absl::GetFlag(FLAGS_target_mb_per_s);
    absl::StrAppendFormat(
        &md, "- ReadLetorFile %.1f MB per CPU-second (target >= %.0f): %s\n",
        speed, target, speed >= target ? "PASS" : "MISS");
    if (rows.size() > 2 && rows[2].second.ok()) {
      absl::StrAppendFormat(
          &md, "- ReadLetorFile speed / XGBoost loader speed (CPU): %.2f\n",
          rows[2].second->cpu_seconds / rows[0].second->cpu_seconds);
    }
  }
  std::fputs(md.c_str(), stdout);
  if (const std::string out = absl::GetFlag(FLAGS_out); !out.empty()) {
    if (const absl::Status status = WriteFileAtomically(out, md);
        !status.ok()) {
      std::fprintf(stderr, "plrank-bench-parse: %s\n",
                   std::string(status.message()).c_str());
      exit_code = 1;
    }
  }
  if (generated && !absl::GetFlag(FLAGS_keep_file)) std::filesystem::remove(path, error);
  return exit_code;
}

}  // namespace
}  // namespace plrank::bench

int main(int argc, char** argv) {
  std::vector<char*> rest = plrank::ParseProgramFlags(
      argc, argv,
      "LETOR parsing throughput: plrank::ReadLetorFile vs XGBoost's loader.\n"
      "  plrank-bench-parse [--file F | --size_mb 150] [--repeats 3]");
  if (rest.size() > 1) {
    std::fprintf(stderr, "plrank-bench-parse: unexpected argument %s\n", rest[1]);
    return 2;
  }
  return plrank::bench::Main();
}
