#ifndef PLRANK_TESTS_TESTING_LISTENING_SOCKETS_H_
#define PLRANK_TESTS_TESTING_LISTENING_SOCKETS_H_

// The TCP sockets a process listens on, read from /proc (its socket file
// descriptors matched with the kernel's tables of the process's network
// namespace), so a test sees every listener, announced or not.

#include <arpa/inet.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace plrank::testing {

// "ADDRESS:PORT" of every listening TCP socket of `pid`, sorted; IPv6
// addresses as inet_ntop writes them ("::", "::1", "::ffff:127.0.0.1").
inline std::vector<std::string> ListeningSockets(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::set<std::string> inodes;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(proc + "/fd", error)) {
    char target[256];
    const ssize_t n =
        readlink(entry.path().c_str(), target, sizeof(target) - 1);
    if (n <= 0) continue;
    const std::string link(target, static_cast<size_t>(n));
    if (link.rfind("socket:[", 0) == 0) {
      inodes.insert(link.substr(8, link.size() - 9));
    }
  }
  std::vector<std::string> sockets;
  for (const bool v6 : {false, true}) {
    std::ifstream table(proc + (v6 ? "/net/tcp6" : "/net/tcp"));
    std::string line;
    std::getline(table, line);  // header
    while (std::getline(table, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid,
          timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >>
          retransmits >> uid >> timeout >> inode;
      if (state != "0A" || inodes.count(inode) == 0) continue;  // LISTEN
      const size_t colon = local.find(':');
      const std::string hex = local.substr(0, colon);
      const int port = static_cast<int>(
          std::strtol(local.c_str() + colon + 1, nullptr, 16));
      char text[INET6_ADDRSTRLEN] = {};
      if (v6) {
        // Four 32-bit words, each printed in host byte order.
        in6_addr address;
        for (int word = 0; word < 4; ++word) {
          const uint32_t value = static_cast<uint32_t>(
              std::strtoul(hex.substr(word * 8, 8).c_str(), nullptr, 16));
          std::memcpy(&address.s6_addr[word * 4], &value, 4);
        }
        inet_ntop(AF_INET6, &address, text, sizeof(text));
      } else {
        in_addr address;
        address.s_addr =
            static_cast<uint32_t>(std::strtoul(hex.c_str(), nullptr, 16));
        inet_ntop(AF_INET, &address, text, sizeof(text));
      }
      sockets.push_back(std::string(text) + ":" + std::to_string(port));
    }
  }
  std::sort(sockets.begin(), sockets.end());
  return sockets;
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_LISTENING_SOCKETS_H_
