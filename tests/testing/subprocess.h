#ifndef PLRANK_TESTS_TESTING_SUBPROCESS_H_
#define PLRANK_TESTS_TESTING_SUBPROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace plrank::testing {

struct CommandResult {
  int exit_code = -1;   // -signal when killed by a signal
  std::string out;
  std::string err;
};

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A fresh directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "plrank-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Environment variables set in a child on top of the test's own.
using EnvVars = std::vector<std::pair<std::string, std::string>>;

// Starts `argv` with stdout/stderr redirected to files (and `env` added to
// its environment); returns the pid.
inline pid_t StartCommand(const std::vector<std::string>& argv,
                          const std::string& out_path,
                          const std::string& err_path,
                          const EnvVars& env = {}) {
  pid_t pid = fork();
  if (pid == 0) {
    for (const auto& [name, value] : env) {
      setenv(name.c_str(), value.c_str(), 1);
    }
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

inline int WaitForExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return -1;
}

// Runs a program to completion (with `env` added to its environment) and
// captures its output.
inline CommandResult RunCommand(const std::vector<std::string>& argv,
                                const EnvVars& env = {}) {
  TempDir scratch;
  const std::string out = scratch.File("stdout");
  const std::string err = scratch.File("stderr");
  CommandResult result;
  result.exit_code = WaitForExit(StartCommand(argv, out, err, env));
  result.out = ReadWholeFile(out);
  result.err = ReadWholeFile(err);
  return result;
}

// RunCommand under coreutils' timeout: a hung child is killed after
// `seconds` and fails its test instead of hanging it.
inline CommandResult RunBounded(std::vector<std::string> argv,
                                int seconds = 120) {
  argv.insert(argv.begin(),
              {"/usr/bin/timeout", "-s", "KILL", std::to_string(seconds)});
  return RunCommand(argv);
}

inline std::string BinPath(const std::string& program) {
  return std::string(PLRANK_BIN_DIR) + "/" + program;
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_SUBPROCESS_H_
