#include "server/http/http_server.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/ssl.hpp"
#include "boost/asio/strand.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "boost/beast/ssl.hpp"

namespace plrank::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kRequestTimeout = std::chrono::seconds(30);

// One connection: read a request, answer it, repeat while keep-alive.
// `Stream` is beast::tcp_stream or beast::ssl_stream<beast::tcp_stream>.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, const HttpHandler* handler, uint64_t max_body_bytes)
      : stream_(std::move(stream)),
        handler_(handler),
        max_body_bytes_(max_body_bytes) {}

  void Run() {
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
      stream_.async_handshake(
          asio::ssl::stream_base::server,
          [self = this->shared_from_this()](beast::error_code error) {
            if (!error) self->Read();
          });
    } else {
      Read();
    }
  }

 private:
  static constexpr bool kTls =
      !std::is_same_v<Stream, beast::tcp_stream>;

  void Read() {
    parser_.emplace();
    parser_->body_limit(max_body_bytes_);
    beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](
                         beast::error_code error, size_t) {
                       self->OnRead(error);
                     });
  }

  void OnRead(beast::error_code error) {
    if (error == http::error::body_limit) {
      Answer({413, "application/json",
              absl::StrCat("{\"error\":\"the request body is larger than "
                           "this server accepts (",
                           max_body_bytes_, " bytes, --max_message_bytes)\"}")},
             /*keep_alive=*/false, 11);
      return;
    }
    if (error) return Close();  // end of stream, timeout, malformed HTTP
    http::request<http::string_body> request = parser_->release();
    HttpRequest plain{std::string(request.method_string()),
                      std::string(request.target()),
                      std::move(request.body())};
    // Scoring may take longer than reading did: no timer while it runs.
    beast::get_lowest_layer(stream_).expires_never();
    Answer((*handler_)(plain), request.keep_alive(), request.version());
  }

  void Answer(HttpResponse answer, bool keep_alive, unsigned version) {
    response_ = {};
    response_.version(version);
    response_.result(static_cast<unsigned>(answer.status));
    response_.set(http::field::server, "plrank-server");
    response_.set(http::field::content_type, answer.content_type);
    response_.keep_alive(keep_alive);
    response_.body() = std::move(answer.body);
    response_.prepare_payload();
    beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
    http::async_write(stream_, response_,
                      [self = this->shared_from_this()](
                          beast::error_code error, size_t) {
                        self->OnWrite(error);
                      });
  }

  void OnWrite(beast::error_code error) {
    if (error) return;
    if (!response_.keep_alive()) return Close();
    Read();
  }

  void Close() {
    beast::error_code ignored;
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(5));
      stream_.async_shutdown(
          [self = this->shared_from_this()](beast::error_code) {});
    } else {
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  Stream stream_;
  const HttpHandler* handler_;
  const uint64_t max_body_bytes_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
};

}  // namespace

struct HttpServer::State {
  explicit State(int threads) : io(threads), acceptor(io) {}
  asio::io_context io;
  tcp::acceptor acceptor;
  std::optional<asio::ssl::context> tls;
  HttpHandler handler;
  uint64_t max_body_bytes = 0;
  int port = 0;
  std::vector<std::thread> threads;
  bool stopped = false;

  void Accept() {
    acceptor.async_accept(
        asio::make_strand(io), [this](beast::error_code error,
                                      tcp::socket socket) {
          if (error == asio::error::operation_aborted) return;
          if (!error) {
            beast::tcp_stream stream(std::move(socket));
            if (tls.has_value()) {
              std::make_shared<
                  Session<beast::ssl_stream<beast::tcp_stream>>>(
                  beast::ssl_stream<beast::tcp_stream>(std::move(stream),
                                                       *tls),
                  &handler, max_body_bytes)
                  ->Run();
            } else {
              std::make_shared<Session<beast::tcp_stream>>(
                  std::move(stream), &handler, max_body_bytes)
                  ->Run();
            }
          }
          if (acceptor.is_open()) Accept();
        });
  }
};

namespace {

absl::Status LoadTls(const TlsFiles& files, asio::ssl::context* context) {
  beast::error_code error;
  auto failed = [&](const std::string& file) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HTTP port TLS: ", file, ": ", error.message()));
  };
  context->set_options(asio::ssl::context::default_workarounds |
                           asio::ssl::context::no_sslv2 |
                           asio::ssl::context::no_sslv3 |
                           asio::ssl::context::no_tlsv1 |
                           asio::ssl::context::no_tlsv1_1,
                       error);
  context->use_certificate_chain_file(files.cert_file, error);
  if (error) return failed(files.cert_file);
  context->use_private_key_file(files.key_file, asio::ssl::context::pem,
                                error);
  if (error) return failed(files.key_file);
  if (!files.ca_file.empty()) {
    context->load_verify_file(files.ca_file, error);
    if (error) return failed(files.ca_file);
    context->set_verify_mode(asio::ssl::verify_peer |
                                 asio::ssl::verify_fail_if_no_peer_cert,
                             error);
    if (error) return failed(files.ca_file);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const HttpServerOptions& options, HttpHandler handler) {
  const int threads = std::max(options.num_threads, 1);
  auto state = std::make_unique<State>(threads);
  state->handler = std::move(handler);
  state->max_body_bytes = options.max_body_bytes;
  if (!options.tls.cert_file.empty()) {
    state->tls.emplace(asio::ssl::context::tls_server);
    if (absl::Status loaded = LoadTls(options.tls, &*state->tls);
        !loaded.ok()) {
      return loaded;
    }
  }
  beast::error_code error;
  const asio::ip::address address =
      asio::ip::make_address(options.host, error);
  const std::string where = absl::StrCat(options.host, ":", options.port);
  if (error) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--http_host '", options.host, "' is not an IP address"));
  }
  const tcp::endpoint endpoint(address,
                               static_cast<unsigned short>(options.port));
  auto fail = [&](const char* step) {
    return absl::UnavailableError(absl::StrCat(
        "cannot serve HTTP on ", where, ": ", step, ": ", error.message()));
  };
  state->acceptor.open(endpoint.protocol(), error);
  if (error) return fail("open");
  state->acceptor.set_option(asio::socket_base::reuse_address(true), error);
  state->acceptor.bind(endpoint, error);
  if (error) return fail("bind");
  state->acceptor.listen(asio::socket_base::max_listen_connections, error);
  if (error) return fail("listen");
  state->port = state->acceptor.local_endpoint(error).port();
  state->Accept();
  State* raw = state.get();
  for (int i = 0; i < threads; ++i) {
    state->threads.emplace_back([raw] { raw->io.run(); });
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

HttpServer::HttpServer(std::unique_ptr<State> state)
    : state_(std::move(state)) {}

HttpServer::~HttpServer() { Shutdown(); }

int HttpServer::port() const { return state_->port; }

void HttpServer::Shutdown() {
  if (state_->stopped) return;
  state_->stopped = true;
  state_->io.stop();
  for (std::thread& thread : state_->threads) thread.join();
  // No thread runs the acceptor's handlers any more.
  beast::error_code ignored;
  state_->acceptor.close(ignored);
}

}  // namespace plrank::server
