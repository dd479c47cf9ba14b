// A bare TCP connection to a local HTTP listener, for tests that must send a request slowly, in
// part, or not at all, which no HTTP client library does.
//
//   RawConnection c(port);
//   c.Send("GET / HTTP/1.1\r\n");
//   std::string reply = c.ReadUntilClosed(absl::Seconds(2));
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace gpuprobe::testing_support {

class RawConnection {
 public:
  explicit RawConnection(int port) : socket_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(socket_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawConnection() { close(socket_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }

  bool Send(const std::string& bytes) {
    return send(socket_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }

  // Everything the server sends until it closes the connection; closed() says whether it did
  // within `timeout`.
  std::string ReadUntilClosed(absl::Duration timeout) {
    std::string reply;
    const absl::Time deadline = absl::Now() + timeout;
    for (;;) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return reply;
      pollfd p{socket_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1) <= 0) continue;
      char buffer[4096];
      const ssize_t n = recv(socket_, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        closed_ = true;
        return reply;
      }
      reply.append(buffer, n);
    }
  }

  // Whether the server has closed the connection, without waiting.
  bool ClosedByServer() {
    pollfd p{socket_, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return false;
    char byte;
    return recv(socket_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
  }

  bool closed() const { return closed_; }

 private:
  const int socket_;
  bool connected_ = false;
  bool closed_ = false;
};

}  // namespace gpuprobe::testing_support
