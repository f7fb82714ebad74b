// plrank-server and the signals an operator's environment sends (issue 39
// item 3): a log or stdout reader that goes away (SIGPIPE) costs log lines,
// counted, never the process; SIGHUP rescans the repository and keeps
// serving; SIGTERM still drains and exits 0. Every wait polls an observable
// state with a generous deadline.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "tests/testing/eventually.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::Eventually;
using ::plrank::testing::HttpGet;
using ::plrank::testing::MetricValue;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;

// The version that answered a Rank of model "web" on `port`, or -grpc code.
int64_t RankedVersion(int port) {
  auto stub = v1::Ranker::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  v1::RankRequest request;
  request.mutable_model_spec()->set_name("web");
  auto* dense = request.add_documents()->mutable_dense();
  for (int f = 0; f < plrank::testing::kTestModelFeatures; ++f) {
    dense->add_values(0.5f);
  }
  v1::RankResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  const grpc::Status status = stub->Rank(&context, request, &response);
  if (!status.ok()) return -static_cast<int64_t>(status.error_code());
  return response.model_version();
}

// The number after `prefix` in `text`, 0 when absent.
int NumberAfter(const std::string& text, const std::string& prefix) {
  const size_t at = text.find(prefix);
  return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + prefix.size());
}

// plrank-server with one of its output streams (fd 1 or 2) a pipe nobody
// reads: the read end is closed before the server starts, so every write
// to that stream fails with EPIPE (and raises SIGPIPE). The other stream
// goes to a file.
class ServerWithDeadReader {
 public:
  ServerWithDeadReader(int dead_fd, const std::vector<std::string>& flags)
      : dead_fd_(dead_fd) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) return;
    close(pipe_fds[0]);  // no reader, ever
    std::vector<std::string> argv = {BinPath("plrank-server"), "--port=0",
                                     "--host=127.0.0.1"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    const std::string other_path = scratch_.File("other");
    pid_ = fork();
    if (pid_ == 0) {
      const int other = open(other_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(pipe_fds[1], dead_fd);
      dup2(other, dead_fd == 1 ? 2 : 1);
      std::vector<char*> args;
      for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(pipe_fds[1]);
  }
  ~ServerWithDeadReader() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // What the server wrote on its other stream.
  std::string other_text() const { return ReadWholeFile(scratch_.File("other")); }

  // The port announced on the stream that works (stdout's "listening on",
  // or the server_started log line), 0 until then.
  int port() const {
    const std::string text = other_text();
    return dead_fd_ == 2 ? NumberAfter(text, "listening on 127.0.0.1:")
                         : NumberAfter(text, " address=127.0.0.1:");
  }
  int metrics_port() const {
    const std::string text = other_text();
    return dead_fd_ == 2 ? NumberAfter(text, "metrics on 127.0.0.1:")
                         : NumberAfter(text, " metrics_address=127.0.0.1:");
  }

  // The exit code once it exited (-signal when a signal killed it).
  std::optional<int> Exited() {
    int status = 0;
    if (pid_ <= 0 || waitpid(pid_, &status, WNOHANG) != pid_) return exit_code_;
    pid_ = -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    return exit_code_;
  }
  pid_t pid() const { return pid_; }

 private:
  const int dead_fd_;
  TempDir scratch_;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

TEST(ServerSignalsTest, LogReaderThatLeavesCostsLinesNotTheServer) {
  TempDir base;
  ASSERT_NE(plrank::testing::WriteTestModel(base.path(), "web", 1), "");
  ServerWithDeadReader server(2, {"--model_base_path=" + base.path(),
                                  "--metrics_port=0"});
  ASSERT_TRUE(Eventually([&] {
    return (server.port() > 0 && server.metrics_port() > 0) ||
           server.Exited().has_value();
  }));
  ASSERT_GT(server.port(), 0) << server.other_text();
  // Every load and request logs to the dead stderr; the server answers.
  EXPECT_TRUE(Eventually([&] {
    return RankedVersion(server.port()) == 1 || server.Exited().has_value();
  }));
  EXPECT_FALSE(server.Exited().has_value()) << "exit " << *server.Exited();
  const std::string metrics = HttpGet(server.metrics_port(), "/metrics");
  EXPECT_GE(MetricValue(metrics, "plrank_log_write_failures_total").value_or(0),
            1)
      << metrics;
  kill(server.pid(), SIGTERM);
  ASSERT_TRUE(Eventually([&] { return server.Exited().has_value(); }));
  EXPECT_EQ(*server.Exited(), 0);
}

TEST(ServerSignalsTest, StdoutReaderThatLeavesBeforeTheAnnouncement) {
  // plrank-server ... | head -n 0: the "listening on" line meets no reader.
  TempDir base;
  ASSERT_NE(plrank::testing::WriteTestModel(base.path(), "web", 1), "");
  ServerWithDeadReader server(1, {"--model_base_path=" + base.path(),
                                  "--metrics_port=-1"});
  ASSERT_TRUE(Eventually([&] {
    return server.port() > 0 || server.Exited().has_value();
  }));
  ASSERT_GT(server.port(), 0) << server.other_text();
  EXPECT_TRUE(Eventually([&] {
    return RankedVersion(server.port()) == 1 || server.Exited().has_value();
  }));
  EXPECT_FALSE(server.Exited().has_value()) << "exit " << *server.Exited();
}

TEST(ServerSignalsTest, SighupRescansAndKeepsServing) {
  TempDir base;
  ASSERT_NE(plrank::testing::WriteTestModel(base.path(), "web", 1), "");
  // No polling: only a requested scan can find version 2.
  ServerProcess server({"--model_base_path=" + base.path(),
                        "--poll_interval_seconds=0"});
  ASSERT_TRUE(server.ok()) << server.Logs();
  ASSERT_TRUE(Eventually([&] { return RankedVersion(server.port()) == 1; }));
  ASSERT_NE(plrank::testing::WriteTestModel(base.path(), "web", 2), "");
  kill(server.pid(), SIGHUP);
  EXPECT_TRUE(Eventually([&] { return RankedVersion(server.port()) == 2; }))
      << server.Logs();
  EXPECT_THAT(server.stderr_text(),
              HasSubstr("event=reload_requested reason=SIGHUP"));
  EXPECT_EQ(server.Stop(SIGTERM, std::chrono::seconds(60)), 0);
  EXPECT_THAT(server.stderr_text(), HasSubstr("event=shutdown_complete"));
}

}  // namespace
}  // namespace plrank
