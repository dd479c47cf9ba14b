// gpuprobed under a service manager (systemd's Type=notify): READY=1 once it serves, STOPPING=1
// when told to stop. A real daemon (cpu backend) and a datagram socket standing in for systemd.
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/subprocess.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;
using testing_support::ChildProcess;

// The next datagram on `fd`, or "" after 20 s.
std::string Receive(int fd) {
  char buffer[256] = {};
  const ssize_t n = recv(fd, buffer, sizeof(buffer) - 1, 0);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
}

TEST(ServiceNotifyTest, TheDaemonSaysReadyOnceItServesAndStoppingWhenTerminated) {
  const testing_support::ScopedTempDir temp("gpuprobe_notify");
  const std::string dir = temp.path();
  const std::string socket_path = dir + "/notify";
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(socket_path.size(), sizeof(address.sun_path));
  std::memcpy(address.sun_path, socket_path.data(), socket_path.size());
  ASSERT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0)
      << std::strerror(errno);
  const timeval timeout{.tv_sec = 20, .tv_usec = 0};
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)), 0);

  absl::StatusOr<ChildProcess> daemon =
      ChildProcess::Start({GPUPROBED_PATH, "--listen", "127.0.0.1:0", "--backend", "cpu", "--http",
                           "127.0.0.1:0", "--data-dir", dir + "/data"},
                          dir + "/daemon.log", {"NOTIFY_SOCKET=" + socket_path});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  EXPECT_EQ(Receive(fd), "READY=1");
  // Ready means serving: both listeners were up before the notification.
  EXPECT_THAT(daemon->Log(), HasSubstr(" listening on 127.0.0.1:"));
  EXPECT_THAT(daemon->Log(), HasSubstr("http listening on"));
  absl::StatusOr<int> code = daemon->StopWith(SIGTERM, absl::Seconds(20));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0);
  EXPECT_EQ(Receive(fd), "STOPPING=1");
  close(fd);
}

}  // namespace
}  // namespace gpuprobe
