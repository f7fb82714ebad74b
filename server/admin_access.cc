#include "server/admin_access.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace plrank::server {
namespace {

// The address part of a peer URI without scheme, brackets and port.
std::string PeerAddress(absl::string_view peer) {
  // Newer gRPC versions percent-encode the IPv6 brackets.
  const std::string decoded = absl::StrReplaceAll(
      peer, {{"%5B", "["}, {"%5b", "["}, {"%5D", "]"}, {"%5d", "]"}});
  absl::string_view rest = decoded;
  if (absl::ConsumePrefix(&rest, "ipv4:")) {
    const size_t colon = rest.rfind(':');
    return std::string(colon == absl::string_view::npos ? rest
                                                        : rest.substr(0, colon));
  }
  if (absl::ConsumePrefix(&rest, "ipv6:") && absl::ConsumePrefix(&rest, "[")) {
    const size_t close = rest.find(']');
    if (close == absl::string_view::npos) return "";
    absl::string_view address = rest.substr(0, close);
    // A zone ("fe80::1%eth0") is not part of the address.
    const size_t zone = address.find('%');
    if (zone != absl::string_view::npos) address = address.substr(0, zone);
    return std::string(address);
  }
  return "";  // unix sockets and anything else: not an IP peer
}

bool IsLoopbackV4(const in_addr& address) {
  return (ntohl(address.s_addr) >> 24) == 127;
}

bool HasAdminIdentity(const AdminAccessPolicy& policy,
                      const grpc::ServerContext& context) {
  if (policy.tls_identities.empty()) return false;
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return false;
  for (const char* property :
       {"x509_common_name", "x509_subject_alternative_name"}) {
    for (const grpc::string_ref& value : auth->FindPropertyValues(property)) {
      const std::string name(value.data(), value.size());
      if (std::find(policy.tls_identities.begin(), policy.tls_identities.end(),
                    name) != policy.tls_identities.end()) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

bool IsLoopbackPeer(absl::string_view peer) {
  const std::string address = PeerAddress(peer);
  if (address.empty()) return false;
  in_addr v4;
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) return IsLoopbackV4(v4);
  in6_addr v6;
  if (inet_pton(AF_INET6, address.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  if (IN6_IS_ADDR_V4MAPPED(&v6)) {
    std::memcpy(&v4.s_addr, &v6.s6_addr[12], 4);
    return IsLoopbackV4(v4);
  }
  return false;
}

absl::Status CheckAdminAccess(const AdminAccessPolicy& policy,
                              const grpc::ServerContext& context,
                              absl::string_view method) {
  if (policy.from_any || IsLoopbackPeer(context.peer()) ||
      HasAdminIdentity(policy, context)) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(absl::StrCat(
      method, " is an admin RPC, answered only to clients on the server's "
      "machine (loopback)",
      policy.tls_identities.empty()
          ? ""
          : " or with an admin client certificate (--admin_tls_identities)",
      "; the server's operator can allow it with --admin_from_any"));
}

}  // namespace plrank::server
