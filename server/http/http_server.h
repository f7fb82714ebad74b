#ifndef PLRANK_SERVER_HTTP_HTTP_SERVER_H_
#define PLRANK_SERVER_HTTP_HTTP_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/tls_credentials.h"

namespace plrank::server {

// One HTTP request as the handler sees it (the body already read, whole).
struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, as sent
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int32_t port = 0;  // 0 = any free port
  // Request bodies above this are answered 413 and the connection closed.
  uint64_t max_body_bytes = 64 << 20;
  // Certificate and key: HTTPS; with a CA too, client certificates are
  // required and verified (the gRPC port's --tls_* files).
  TlsFiles tls;
  int32_t num_threads = 2;
};

// An HTTP/1.1 server (Boost.Beast over Asio): keep-alive, bodies bounded by
// max_body_bytes, 30 s to send a request's headers and body, the handler run
// on one of num_threads I/O threads per request. Malformed HTTP is answered
// by Beast's parser errors (the connection is closed); nothing a client
// sends throws out of it.
class HttpServer {
 public:
  // Binds, listens and starts the threads. UNAVAILABLE when the address
  // cannot be bound; INVALID_ARGUMENT for TLS files OpenSSL refuses.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const HttpServerOptions& options, HttpHandler handler);
  ~HttpServer();  // Shutdown()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  // Stops accepting, drops open connections and joins the threads.
  void Shutdown();

  struct State;

 private:
  explicit HttpServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_HTTP_HTTP_SERVER_H_
