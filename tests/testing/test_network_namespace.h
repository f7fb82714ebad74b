#ifndef PLRANK_TESTS_TESTING_TEST_NETWORK_NAMESPACE_H_
#define PLRANK_TESTS_TESTING_TEST_NETWORK_NAMESPACE_H_

// A private network namespace for tests that need a client that is not on
// the loopback interface. The calling process (and every thread and child it
// starts afterwards) moves into a fresh namespace whose only interface is
// `lo`, brought up and given the extra address kTestNonLoopbackAddress
// (TEST-NET-1, documentation only). A client that connects to that address
// arrives with it as its peer address, yet nothing leaves the namespace.

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace plrank::testing {

inline constexpr char kTestNonLoopbackAddress[] = "192.0.2.1";

// Enters the namespace once per process; later calls return the first
// result. Call it before anything starts a thread (gRPC included): threads
// started earlier stay in the machine's namespace. Returns "" on success,
// else why it is not possible here (e.g. no CAP_SYS_ADMIN).
inline std::string EnterTestNetworkNamespace() {
  static const std::string result = [] {
    if (unshare(CLONE_NEWNET) != 0) {
      return std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
    }
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return std::string("socket: ") + std::strerror(errno);
    ifreq lo{};
    std::strncpy(lo.ifr_name, "lo", IFNAMSIZ - 1);
    std::string error;
    if (ioctl(fd, SIOCGIFFLAGS, &lo) != 0) {
      error = std::string("SIOCGIFFLAGS lo: ") + std::strerror(errno);
    } else {
      lo.ifr_flags = static_cast<short>(lo.ifr_flags | IFF_UP | IFF_RUNNING);
      if (ioctl(fd, SIOCSIFFLAGS, &lo) != 0) {
        error = std::string("SIOCSIFFLAGS lo: ") + std::strerror(errno);
      }
    }
    ifreq alias{};
    std::strncpy(alias.ifr_name, "lo:1", IFNAMSIZ - 1);
    auto* address = reinterpret_cast<sockaddr_in*>(&alias.ifr_addr);
    address->sin_family = AF_INET;
    inet_pton(AF_INET, kTestNonLoopbackAddress, &address->sin_addr);
    if (error.empty() && ioctl(fd, SIOCSIFADDR, &alias) != 0) {
      error = std::string("SIOCSIFADDR lo:1: ") + std::strerror(errno);
    }
    close(fd);
    return error;
  }();
  return result;
}

// True when a TCP connection to address:port is accepted.
inline bool CanConnect(const std::string& address, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, address.c_str(), &target.sin_addr);
  const bool connected =
      connect(fd, reinterpret_cast<sockaddr*>(&target), sizeof(target)) == 0;
  close(fd);
  return connected;
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_TEST_NETWORK_NAMESPACE_H_
