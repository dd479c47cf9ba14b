// HOST:PORT as --server, --listen and --http take it: names, IPv4 and bracketed IPv6 hosts with
// a port in range; anything else refused naming the flag before any lookup (issue 55, item 14:
// --server 'a b:1' reached DNS).
#include "common/host_port.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

TEST(HostPortTest, NamesAddressesAndBracketedIpv6AreRead) {
  for (const char* text :
       {"gpu-host.example_1:7070", "127.0.0.1:1", "[::1]:65535", "[fe80::1%eth0]:80"}) {
    EXPECT_TRUE(ParseHostPort("--server", text, 1).ok()) << text;
  }
  EXPECT_EQ(ParseHostPort("--server", "[::1]:70", 1)->host, "[::1]");
}

TEST(HostPortTest, WhatIsNoHostPortIsRefusedNamingTheFlag) {
  for (const char* text :
       {"a b:1", "host/x:1", "h:0", "h:65536", ":80", "h:", "h:8a", "a:b:1", "[]:1", "h\t:1"}) {
    const absl::StatusOr<HostPort> parsed = ParseHostPort("--server", text, 1);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(parsed.status().message(), testing::HasSubstr("--server: ")) << text;
  }
}

}  // namespace
}  // namespace gpuprobe
