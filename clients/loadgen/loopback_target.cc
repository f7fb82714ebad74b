#include "clients/loadgen/loopback_target.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace plrank::loadgen {
namespace {

// "host:port", "[v6]:port", "v6" or "host" -> host.
absl::string_view HostOf(absl::string_view address) {
  if (absl::StartsWith(address, "[")) {
    const size_t close = address.find(']');
    return close == absl::string_view::npos ? address
                                            : address.substr(1, close - 1);
  }
  const size_t colons = std::count(address.begin(), address.end(), ':');
  if (colons == 1) return address.substr(0, address.find(':'));
  return address;  // no port, or a bare IPv6 address
}

bool IsLoopbackHost(absl::string_view host_view) {
  const std::string host = absl::AsciiStrToLower(host_view);
  if (host == "localhost" || host == "localhost.") return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (std::memcmp(&v6, &in6addr_loopback, sizeof(v6)) == 0) return true;
    // ::ffff:127.x.y.z, the IPv4-mapped form of a loopback address.
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

}  // namespace

absl::Status CheckLoopbackTarget(const std::string& target) {
  const auto refuse = [&target](absl::string_view why) {
    return absl::PermissionDeniedError(absl::StrCat(
        "refusing target '", target, "': ", why,
        ". plrank-loadgen only sends load to this machine's loopback "
        "interface (127.0.0.0/8, localhost or [::1]) so that a benchmark can "
        "never flood a shared or production server by mistake; run it on the "
        "server's host against 127.0.0.1:PORT"));
  };
  absl::string_view rest = target;
  std::vector<absl::string_view> addresses;
  if (absl::ConsumePrefix(&rest, "dns:")) {
    // dns:[//authority/]host[:port]
    if (absl::ConsumePrefix(&rest, "//")) {
      const size_t slash = rest.find('/');
      if (slash == absl::string_view::npos) return refuse("malformed dns: URI");
      rest.remove_prefix(slash + 1);
    }
    addresses.push_back(rest);
  } else if (absl::ConsumePrefix(&rest, "ipv4:") ||
             absl::ConsumePrefix(&rest, "ipv6:")) {
    addresses = absl::StrSplit(rest, ',');
  } else if (absl::StrContains(rest, "://") || absl::StartsWith(rest, "unix:") ||
             absl::StartsWith(rest, "unix-abstract:")) {
    return refuse("only host:port targets on loopback are accepted");
  } else {
    addresses.push_back(rest);
  }
  for (absl::string_view address : addresses) {
    const absl::string_view host = HostOf(address);
    if (host.empty()) return refuse("no host");
    if (!IsLoopbackHost(host)) {
      return refuse(absl::StrCat("'", host, "' is not a loopback address"));
    }
  }
  return absl::OkStatus();
}

}  // namespace plrank::loadgen
