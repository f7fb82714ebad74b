#ifndef PLRANK_SERVER_ADMIN_ACCESS_H_
#define PLRANK_SERVER_ADMIN_ACCESS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/server_context.h"

namespace plrank::server {

// Who may call the admin RPCs (ReloadModels, ListModels, GetModelStatus).
// They list every model with its files' load errors and metadata, and
// ReloadModels makes the server rescan the disk on demand, so by default
// only clients on this machine get them: a peer on the loopback interface
// (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104). Rank, Evaluate, health and
// reflection are answered to everyone who reaches the port.
struct AdminAccessPolicy {
  // --admin_from_any: answer admin RPCs to every peer.
  bool from_any = false;
  // --admin_tls_identities: with mTLS, a client whose verified certificate
  // has one of these as common name or subject alternative name may call
  // admin RPCs from anywhere.
  std::vector<std::string> tls_identities;
};

// True for a gRPC peer URI ("ipv4:127.0.0.1:5000", "ipv6:[::1]:5000",
// "ipv6:%5B::1%5D:5000") whose address is on the loopback interface.
bool IsLoopbackPeer(absl::string_view peer);

// OK when `policy` lets the caller of `context` use admin RPC `method`;
// otherwise PERMISSION_DENIED saying how to allow it (the message names no
// file and no model).
absl::Status CheckAdminAccess(const AdminAccessPolicy& policy,
                              const grpc::ServerContext& context,
                              absl::string_view method);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_ADMIN_ACCESS_H_
