// plrank-server and the connections clients hold (issue 39), with raw TCP
// sockets on loopback speaking just enough HTTP/2: idle connections do not
// stretch the graceful drain; a client that opens streams and never reads
// holds a bounded number of threads and memory while others are served,
// and keepalive closes its connection; --max_connection_age_seconds closes
// even a connection with RPCs in flight. A server's FIN to a client that
// does not read waits behind the unread answers, so the released server
// threads show that such a connection is gone. Every wait polls an observable
// state with a generous deadline.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "tests/testing/client_context.h"
#include "tests/testing/eventually.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank {
namespace {

using ::plrank::testing::ClientContextFor;
using ::plrank::testing::Eventually;
using ::plrank::testing::kTestModelFeatures;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

// One HTTP/2 frame (RFC 9113 section 4.1).
std::string Frame(uint8_t type, uint8_t flags, uint32_t stream,
                  const std::string& payload) {
  std::string frame;
  const uint32_t length = static_cast<uint32_t>(payload.size());
  frame.push_back(static_cast<char>(length >> 16));
  frame.push_back(static_cast<char>(length >> 8));
  frame.push_back(static_cast<char>(length));
  frame.push_back(static_cast<char>(type));
  frame.push_back(static_cast<char>(flags));
  frame.push_back(static_cast<char>((stream >> 24) & 0x7f));  // R bit 0
  frame.push_back(static_cast<char>(stream >> 16));
  frame.push_back(static_cast<char>(stream >> 8));
  frame.push_back(static_cast<char>(stream));
  return frame + payload;
}

// HPACK literal header field without indexing, new name, no Huffman
// (RFC 7541 section 6.2.2); names and values below 127 bytes.
std::string Literal(const std::string& name, const std::string& value) {
  return std::string(1, '\0') + static_cast<char>(name.size()) + name +
         static_cast<char>(value.size()) + value;
}

constexpr uint8_t kData = 0, kHeaders = 1, kSettings = 4;
constexpr uint8_t kEndStream = 1, kEndHeaders = 4;

// A client connection on a raw socket: the HTTP/2 preface and an empty
// SETTINGS frame are sent; nothing is read unless a test says so.
class RawConnection {
 public:
  // `receive_buffer` > 0 shrinks the socket's receive buffer (before
  // connecting), so a client that does not read stops the server's sends
  // sooner.
  explicit RawConnection(int port, int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (receive_buffer > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer,
                   sizeof(receive_buffer));
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address),
                           sizeof(address)) == 0 &&
                 Send(std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") +
                      Frame(kSettings, 0, 0, ""));
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }

  bool Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent,
                               MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads what the server sent so far (its SETTINGS) and acknowledges it:
  // a well-behaved client that then stays idle.
  bool AcknowledgeSettings() {
    std::string buffer(65536, '\0');
    pollfd entry{fd_, POLLIN, 0};
    if (::poll(&entry, 1, 30000) != 1) return false;
    if (::recv(fd_, buffer.data(), buffer.size(), 0) <= 0) return false;
    return Send(Frame(kSettings, 1, 0, ""));
  }

  // Opens `stream` (odd, increasing) on the unary or streaming `method`
  // and sends `messages` (each a serialized protobuf), then END_STREAM.
  bool Call(uint32_t stream, const std::string& method,
            const std::vector<std::string>& messages) {
    const std::string headers =
        Literal(":method", "POST") + Literal(":scheme", "http") +
        Literal(":path", method) + Literal(":authority", "127.0.0.1") +
        Literal("content-type", "application/grpc") + Literal("te", "trailers");
    std::string body;
    for (const std::string& message : messages) {
      const uint32_t length = static_cast<uint32_t>(message.size());
      body.push_back('\0');  // not compressed
      for (int shift = 24; shift >= 0; shift -= 8) {
        body.push_back(static_cast<char>((length >> shift) & 0xff));
      }
      body += message;
    }
    return Send(Frame(kHeaders, kEndHeaders, stream, headers) +
                Frame(kData, kEndStream, stream, body));
  }

  // Whether the server has closed the connection (FIN or reset), seen
  // without reading what it sent.
  bool ClosedByServer() const {
    pollfd entry{fd_, POLLRDHUP, 0};
    return ::poll(&entry, 1, 0) == 1 &&
           (entry.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// A reflection request whose answer (the descriptors of ranker.proto and
// its imports) is some kilobytes: a few bytes that cost the server a large
// response, which a client that never reads leaves queued.
std::string FileContainingRanker() {
  const std::string symbol = "plrank.v1.Ranker";
  // ServerReflectionRequest.file_containing_symbol = 4 (length-delimited).
  return std::string(1, '\x22') + static_cast<char>(symbol.size()) + symbol;
}

constexpr char kReflection[] =
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

// "Threads:" of /proc/<pid>/status, or -1.
int Threads(pid_t pid) {
  const std::string status =
      ReadWholeFile("/proc/" + std::to_string(pid) + "/status");
  const size_t at = status.find("Threads:");
  return at == std::string::npos ? -1 : std::atoi(status.c_str() + at + 8);
}

v1::RankRequest RankOfWeb() {
  v1::RankRequest request;
  request.mutable_model_spec()->set_name("web");
  v1::Document* document = request.add_documents();
  for (int f = 0; f < kTestModelFeatures; ++f) {
    document->mutable_dense()->add_values(0.5f);
  }
  return request;
}

// A client that opens `streams` reflection streams and never reads their
// answers: 60 requests per stream, each answered with kilobytes, far more
// than the socket buffers and flow-control windows hold, so each stream
// keeps a server thread waiting to send.
bool OpenGreedyStreams(RawConnection& greedy, int first, int streams) {
  const std::vector<std::string> requests(60, FileContainingRanker());
  for (int i = first; i < first + streams; ++i) {
    if (!greedy.Call(2 * i + 1, kReflection, requests)) return false;
  }
  return true;
}

class ServerConnectionsTest : public ::testing::Test {
 protected:
  void StartServer(const std::vector<std::string>& extra) {
    ASSERT_NE(plrank::testing::WriteTestModel(base_.path(), "web", 1), "");
    std::vector<std::string> flags = {"--model_base_path=" + base_.path()};
    flags.insert(flags.end(), extra.begin(), extra.end());
    server_ = std::make_unique<ServerProcess>(flags);
    ASSERT_TRUE(server_->ok()) << server_->Logs();
    ASSERT_TRUE(Eventually([&] { return RankOk(); })) << server_->Logs();
  }

  // A never-reading client opens 16 streams: their threads show up, then
  // go once the server has closed the connection.
  void HoldStreamsUntilTheServerCloses() {
    const pid_t pid = server_->pid();
    const int threads_before = Threads(pid);
    RawConnection greedy(server_->port(), /*receive_buffer=*/4096);
    ASSERT_TRUE(greedy.connected());
    ASSERT_TRUE(greedy.AcknowledgeSettings());
    ASSERT_TRUE(OpenGreedyStreams(greedy, 0, 16));
    ASSERT_TRUE(Eventually([&] { return Threads(pid) >= threads_before + 8; }))
        << Threads(pid) << " threads, " << threads_before << " before";
    EXPECT_TRUE(Eventually([&] { return Threads(pid) <= threads_before + 4; }))
        << Threads(pid) << " threads, " << threads_before << " before";
  }

  bool RankOk() {
    v1::RankResponse response;
    return server_->stub().Rank(ClientContextFor(60, false).get(), RankOfWeb(), &response).ok();
  }

  TempDir base_;
  std::unique_ptr<ServerProcess> server_;
};

// Issue 39 item 11: gRPC's Server::Shutdown waits for every connection to
// close, so idle connections (keepalive clients, clients that ignore
// GOAWAY) held every drain to its full deadline (drain_timeout after 30 s
// here). Now the drain ends once no RPC is in flight.
TEST_F(ServerConnectionsTest, IdleConnectionsDoNotStretchTheDrain) {
  StartServer({"--drain_seconds=30", "--lame_duck_seconds=0"});
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(std::make_unique<RawConnection>(server_->port()));
    ASSERT_TRUE(idle.back()->connected());
    // Two acknowledge the server's settings, two never read at all.
    if (i % 2 == 0) {
      ASSERT_TRUE(idle.back()->AcknowledgeSettings());
    }
  }
  ASSERT_TRUE(RankOk());  // and the test's own channel stays open, idle

  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(server_->Stop(SIGTERM, std::chrono::seconds(60)), 0);
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  const std::string log = server_->stderr_text();
  EXPECT_THAT(log, HasSubstr("event=shutdown_complete"));
  EXPECT_THAT(log, Not(HasSubstr("event=drain_timeout"))) << log;
  EXPECT_LT(seconds, 30.0) << log;
  for (const auto& connection : idle) {
    EXPECT_TRUE(connection->ClosedByServer());
  }
}

// Issue 39 item 1: a client that opens streams whose answers it never
// reads. It holds at most --max_concurrent_streams server threads (one per
// stream, waiting on flow control) and little memory while other clients
// are served; a stream beyond the bound makes the server drop the
// connection, and the threads come back.
TEST_F(ServerConnectionsTest, NeverReadingClientIsBounded) {
  constexpr int kStreams = 32;
  StartServer({"--max_concurrent_streams=" + std::to_string(kStreams),
               "--keepalive_time_seconds=3600"});
  const pid_t pid = server_->pid();
  const int threads_before = Threads(pid);
  const int64_t memory_before = server_->ResidentBytes();
  ASSERT_GT(threads_before, 0);

  RawConnection greedy(server_->port(), /*receive_buffer=*/4096);
  ASSERT_TRUE(greedy.connected());
  // gRPC 1.51 applies --max_concurrent_streams once the client has
  // acknowledged the server's SETTINGS; one that never does gets the
  // HTTP/2 default, no bound (docs/server-limits.md). This one reads that
  // first frame, and nothing after it.
  ASSERT_TRUE(greedy.AcknowledgeSettings());
  ASSERT_TRUE(OpenGreedyStreams(greedy, 0, kStreams));
  ASSERT_TRUE(Eventually([&] {
    return Threads(pid) >= threads_before + kStreams / 2;
  })) << Threads(pid) << " threads, " << threads_before << " before";

  for (int i = 0; i < 20; ++i) ASSERT_TRUE(RankOk()) << i;
  EXPECT_LE(Threads(pid), threads_before + kStreams + 8);
  EXPECT_LT(server_->ResidentBytes() - memory_before, int64_t{64} << 20);

  // One stream more than the bound: the connection is dropped (its FIN
  // waits behind the unread answers, so the threads show it).
  ASSERT_TRUE(OpenGreedyStreams(greedy, kStreams, 1));
  EXPECT_TRUE(Eventually([&] { return Threads(pid) <= threads_before + 4; }))
      << Threads(pid) << " threads, " << threads_before << " before";
  EXPECT_TRUE(RankOk());
}

// The same client within the bound: keepalive closes its connection (it
// cannot answer a ping), and the threads come back.
TEST_F(ServerConnectionsTest, KeepaliveClosesANeverReadingClient) {
  StartServer({"--keepalive_time_seconds=2", "--keepalive_timeout_seconds=1"});
  HoldStreamsUntilTheServerCloses();
  EXPECT_TRUE(RankOk());
}

// --max_connection_age_seconds: a connection is closed after age + grace
// even while its RPCs wait (here a never-reading client, keepalive far
// away), and well-behaved clients reconnect transparently.
TEST_F(ServerConnectionsTest, AgedConnectionsAreClosed) {
  StartServer({"--max_connection_age_seconds=2",
               "--max_connection_age_grace_seconds=1",
               "--keepalive_time_seconds=3600"});
  HoldStreamsUntilTheServerCloses();
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(RankOk()) << i;
}

}  // namespace
}  // namespace plrank
