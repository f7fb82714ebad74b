#include "bench/child_process.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace plrank::bench {

absl::StatusOr<ChildRun> RunChild(const std::vector<std::string>& argv,
                                  const std::string& stdout_path,
                                  const std::string& stderr_path) {
  if (argv.empty()) return absl::InvalidArgumentError("empty command line");
  if (access(argv[0].c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(argv[0], " is not executable"));
  }
  // Everything the child needs is built before fork(): only async-signal-
  // safe calls happen between fork() and exec().
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int out_fd =
      open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd =
      open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0 || err_fd < 0) {
    if (out_fd >= 0) close(out_fd);
    if (err_fd >= 0) close(err_fd);
    return absl::InternalError(absl::StrCat("cannot create ", stdout_path,
                                            " / ", stderr_path, ": ",
                                            std::strerror(errno)));
  }

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    close(out_fd);
    close(err_fd);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    dup2(out_fd, STDOUT_FILENO);  // dup2'd descriptors lose O_CLOEXEC
    dup2(err_fd, STDERR_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out_fd);
  close(err_fd);

  int status = 0;
  struct rusage usage {};
  pid_t waited;
  do {
    waited = wait4(pid, &status, 0, &usage);
  } while (waited < 0 && errno == EINTR);
  const auto end = std::chrono::steady_clock::now();
  if (waited != pid) {
    return absl::InternalError(absl::StrCat("wait4: ", std::strerror(errno)));
  }

  ChildRun run;
  run.wall_seconds = std::chrono::duration<double>(end - start).count();
  run.peak_rss_kb = usage.ru_maxrss;  // kilobytes on Linux
  if (WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    run.term_signal = WTERMSIG(status);
  }
  std::ifstream in(stdout_path);
  std::stringstream text;
  text << in.rdbuf();
  run.stdout_text = text.str();
  return run;
}

double ReportedValue(const std::string& text, const std::string& key) {
  double value = -1;
  const std::string prefix = key + "=";
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, prefix)) continue;
    double parsed;
    if (absl::SimpleAtod(line, &parsed)) value = parsed;
  }
  return value;
}

double WarnIfMachineBusy(double busy_load) {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  if (in >> load && load > busy_load) {
    std::fprintf(stderr,
                 "warning: load average %.2f: the machine is busy, timings "
                 "will be inflated (run benchmarks on an idle machine)\n",
                 load);
  }
  return load;
}

std::string TailOfFile(const std::string& path, int max_lines) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(std::move(line));
    if (static_cast<int>(lines.size()) > max_lines) lines.erase(lines.begin());
  }
  std::string out;
  for (const std::string& line : lines) absl::StrAppend(&out, "  ", line, "\n");
  return out;
}

}  // namespace plrank::bench
