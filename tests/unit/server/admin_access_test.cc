// Which gRPC peers count as "on this machine" for the admin RPCs.
#include "server/admin_access.h"

#include "gtest/gtest.h"

namespace plrank::server {
namespace {

TEST(IsLoopbackPeerTest, LoopbackAddresses) {
  for (const char* peer :
       {"ipv4:127.0.0.1:5000", "ipv4:127.255.0.9:1", "ipv6:[::1]:5000",
        "ipv6:%5B::1%5D:5000", "ipv6:[::ffff:127.0.0.1]:80",
        "ipv6:%5B::ffff:127.0.0.2%5D:80"}) {
    EXPECT_TRUE(IsLoopbackPeer(peer)) << peer;
  }
}

TEST(IsLoopbackPeerTest, OtherPeers) {
  for (const char* peer :
       {"ipv4:192.0.2.1:5000", "ipv4:10.0.0.1:1", "ipv4:128.0.0.1:1",
        "ipv6:[2001:db8::1]:5000", "ipv6:[::ffff:192.0.2.1]:80",
        "ipv6:[fe80::1%25eth0]:80", "ipv6:[::]:1", "unix:/tmp/socket",
        "ipv4:127.0.0.1.evil:1", "", "127.0.0.1:5000", "ipv6:::1:5000"}) {
    EXPECT_FALSE(IsLoopbackPeer(peer)) << peer;
  }
}

}  // namespace
}  // namespace plrank::server
