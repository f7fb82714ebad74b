#ifndef PLRANK_CLIENTS_LOADGEN_LOOPBACK_TARGET_H_
#define PLRANK_CLIENTS_LOADGEN_LOOPBACK_TARGET_H_

#include <string>

#include "absl/status/status.h"

namespace plrank::loadgen {

// OK when every address of the gRPC target is on this machine's loopback
// interface: 127.0.0.0/8, "localhost" or ::1 (bare, bracketed, or behind a
// dns:/ipv4:/ipv6: scheme). Anything else -- other hosts, names that need a
// resolver, 0.0.0.0, unix sockets -- is refused with a message that says why:
// a load generator pointed at a shared or production server by mistake is a
// denial of service.
absl::Status CheckLoopbackTarget(const std::string& target);

}  // namespace plrank::loadgen

#endif  // PLRANK_CLIENTS_LOADGEN_LOOPBACK_TARGET_H_
