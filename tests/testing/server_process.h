#ifndef PLRANK_TESTS_TESTING_SERVER_PROCESS_H_
#define PLRANK_TESTS_TESTING_SERVER_PROCESS_H_

// Test support for the integration tests: runs a real server (plrank-server,
// plrank-echo-server), checks health over grpc.health.v1 and scrapes
// /metrics over raw HTTP. The one server-process helper of the tests.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "tests/testing/subprocess.h"

namespace plrank::testing {

// The port number after the last ':' of the first line starting with
// `prefix` in `text`; 0 if absent.
inline int ParsePortAfter(const std::string& text, const std::string& prefix) {
  size_t at = text.find(prefix);
  if (at == std::string::npos) return 0;
  const size_t end = text.find('\n', at);
  if (end == std::string::npos) return 0;  // line not complete yet
  const std::string line = text.substr(at, end - at);
  const size_t colon = line.rfind(':');
  if (colon == std::string::npos) return 0;
  return std::atoi(line.c_str() + colon + 1);
}

// A server child process on 127.0.0.1, ports chosen by the server (it
// prints "listening on HOST:PORT" and, for plrank-server with a metrics
// port, "metrics on HOST:PORT"). Destruction stops it with SIGTERM (then
// SIGKILL after 10 s), so servers shut down as in production.
class ServerProcess {
 public:
  // Any server command, run as given (argv[0] is the program); waits (up to
  // 30 s) for its "listening on" line, and for "metrics on" when `argv`
  // asks for a metrics port (--metrics_port= other than -1).
  struct Command {
    std::vector<std::string> argv;
  };
  explicit ServerProcess(const Command& command) {
    bool metrics = false;
    for (const std::string& arg : command.argv) {
      if (arg.rfind("--metrics_port=", 0) == 0 && arg != "--metrics_port=-1") {
        metrics = true;
      }
    }
    Start(command.argv, metrics, std::chrono::seconds(30));
  }

  // plrank-server with --port=0 --metrics_port=0 (and --host=127.0.0.1
  // unless `server_default_host`, to test the server's own default) plus
  // `flags`; waits (up to 20 s) for its "listening on" and "metrics on"
  // lines. Check ok() afterwards.
  explicit ServerProcess(const std::vector<std::string>& flags,
                         bool server_default_host = false) {
    std::vector<std::string> argv = {BinPath("plrank-server"), "--port=0",
                                     "--metrics_port=0"};
    if (!server_default_host) argv.push_back("--host=127.0.0.1");
    argv.insert(argv.end(), flags.begin(), flags.end());
    Start(argv, /*metrics=*/true, std::chrono::seconds(20));
  }
  ~ServerProcess() {
    if (pid_ > 0 && !Stop(SIGTERM, std::chrono::seconds(10)).has_value()) {
      kill(pid_, SIGKILL);
      WaitForExit(pid_);
    }
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Running, with its port (and metrics port, when one was asked for).
  bool ok() const {
    return pid_ > 0 && port_ > 0 && (!wants_metrics_ || metrics_port_ > 0);
  }
  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }
  pid_t pid() const { return pid_; }
  // "127.0.0.1:PORT", the gRPC target.
  std::string target() const { return "127.0.0.1:" + std::to_string(port_); }
  v1::Ranker::Stub& stub() { return *stub_; }
  std::shared_ptr<grpc::Channel> channel() { return channel_; }
  std::string stdout_text() const { return ReadWholeFile(out_path()); }
  std::string stderr_text() const { return ReadWholeFile(err_path()); }
  // Both streams, labelled: for assertion messages.
  std::string Logs() const {
    return "stdout:\n" + stdout_text() + "\nstderr:\n" + stderr_text();
  }

  // Caps the running server's address space at its current size plus
  // `headroom_bytes` (RLIMIT_AS, like `ulimit -v`): later allocations
  // beyond that fail. Relative to the server's own size, so the test does
  // not depend on how much address space gRPC reserves at startup.
  bool LimitAddressSpace(int64_t headroom_bytes) {
    if (pid_ <= 0) return false;
    const std::string status =
        ReadWholeFile("/proc/" + std::to_string(pid_) + "/status");
    const size_t at = status.find("VmSize:");
    if (at == std::string::npos) return false;
    const int64_t size_kb = std::atoll(status.c_str() + at + 7);
    if (size_kb <= 0) return false;
    rlimit limit;
    limit.rlim_cur = limit.rlim_max =
        static_cast<rlim_t>(size_kb * 1024 + headroom_bytes);
    return prlimit(pid_, RLIMIT_AS, &limit, nullptr) == 0;
  }

  // Resident memory of the server (VmRSS), in bytes; -1 if unreadable.
  int64_t ResidentBytes() const {
    if (pid_ <= 0) return -1;
    const std::string status =
        ReadWholeFile("/proc/" + std::to_string(pid_) + "/status");
    const size_t at = status.find("VmRSS:");
    if (at == std::string::npos) return -1;
    return std::atoll(status.c_str() + at + 6) * 1024;
  }

  // Sends `signal` and waits up to `timeout` for the exit; returns the exit
  // code (-signal if killed by one), or nullopt on timeout (then SIGKILLs).
  std::optional<int> Stop(int signal, std::chrono::milliseconds timeout) {
    if (pid_ <= 0) return std::nullopt;
    kill(pid_, signal);
    const auto give_up = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < give_up) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        if (WIFEXITED(status)) return WEXITSTATUS(status);
        if (WIFSIGNALED(status)) return -WTERMSIG(status);
        return -1000;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::nullopt;
  }

 private:
  void Start(const std::vector<std::string>& argv, bool metrics,
             std::chrono::seconds wait) {
    wants_metrics_ = metrics;
    pid_ = StartCommand(argv, out_path(), err_path());
    const auto give_up = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < give_up) {
      const std::string out = ReadWholeFile(out_path());
      port_ = ParsePortAfter(out, "listening on ");
      metrics_port_ = ParsePortAfter(out, "metrics on ");
      if (ok()) break;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (ok()) {
      channel_ =
          grpc::CreateChannel(target(), grpc::InsecureChannelCredentials());
      stub_ = v1::Ranker::NewStub(channel_);
    }
  }
  std::string out_path() const { return scratch_.File("stdout"); }
  std::string err_path() const { return scratch_.File("stderr"); }

  TempDir scratch_;
  pid_t pid_ = -1;
  int port_ = 0;
  int metrics_port_ = 0;
  bool wants_metrics_ = true;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Ranker::Stub> stub_;
};

// grpc.health.v1.Health/Check with hand-encoded messages (no generated code
// for health.proto is installed). Returns 1 SERVING, 2 NOT_SERVING,
// -<grpc code> on an RPC error (e.g. -5 NOT_FOUND for an unknown name).
inline int HealthCheck(const std::shared_ptr<grpc::Channel>& channel,
                       const std::string& service) {
  std::string request;
  if (!service.empty()) {
    request.push_back(0x0A);  // field 1, length-delimited
    request.push_back(static_cast<char>(service.size()));  // < 128 here
    request += service;
  }
  grpc::Slice slice(request);
  grpc::ByteBuffer request_buffer(&slice, 1);
  grpc::ByteBuffer response_buffer;
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(5));
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check",
                 grpc::StubOptions(), &request_buffer, &response_buffer,
                 [&done](grpc::Status status) { done.set_value(status); });
  const grpc::Status status = done.get_future().get();
  if (!status.ok()) return -static_cast<int>(status.error_code());
  grpc::Slice out;
  if (!response_buffer.DumpToSingleSlice(&out).ok()) return 0;
  const std::string bytes(reinterpret_cast<const char*>(out.begin()),
                          out.size());
  if (bytes.size() >= 2 && bytes[0] == 0x08) return bytes[1];
  return 0;  // UNKNOWN (the default value is not encoded)
}

// Body of GET http://127.0.0.1:<port><path> ("" on any failure; 5 s timeout).
inline std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
      0) {
    close(fd);
    return "";
  }
  const std::string request =
      "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (send(fd, request.data(), request.size(), 0) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    return "";
  }
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
    response.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || body == std::string::npos) return "";
  if (response.find(" 200 ") == std::string::npos) return "";
  return response.substr(body + 4);
}

// Value of the sample `series` (metric name with its labels exactly as
// exposed, e.g. plrank_model_versions_loaded{model="web"}) in a Prometheus
// text exposition; nullopt if absent.
inline std::optional<double> MetricValue(const std::string& exposition,
                                         const std::string& series) {
  size_t at = 0;
  while ((at = exposition.find(series + " ", at)) != std::string::npos) {
    if (at == 0 || exposition[at - 1] == '\n') {
      return std::strtod(exposition.c_str() + at + series.size() + 1,
                         nullptr);
    }
    at += series.size();
  }
  return std::nullopt;
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_SERVER_PROCESS_H_
