#ifndef PLRANK_SERVER_HTTP_GATEWAY_PROTOCOL_H_
#define PLRANK_SERVER_HTTP_GATEWAY_PROTOCOL_H_

#include <string>

#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"

namespace plrank::server {

// The HTTP port answers its JSON forms of the Ranker RPCs by calling the
// gRPC service over the server's in-process channel (so limits, metrics,
// deadlines and admin rules are the gRPC ones by construction). It marks
// those calls with this metadata key, value "http".
inline constexpr absl::string_view kGatewayProtocolKey =
    "plrank-gateway-protocol";

// "http" for a call the HTTP gateway made over the in-process channel,
// "grpc" for every other call. Only in-process calls are believed: a
// client on a network (or Unix) socket setting the key is still counted as
// gRPC.
inline const char* CallProtocol(const grpc::ServerContext& context) {
  const std::string peer = context.peer();
  for (const char* network : {"ipv4:", "ipv6:", "unix:", "unix-abstract:",
                              "vsock:"}) {
    if (peer.rfind(network, 0) == 0) return "grpc";
  }
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(grpc::string_ref(kGatewayProtocolKey.data(),
                                           kGatewayProtocolKey.size()));
  if (it != metadata.end() && it->second == "http") return "http";
  return "grpc";
}

}  // namespace plrank::server

#endif  // PLRANK_SERVER_HTTP_GATEWAY_PROTOCOL_H_
