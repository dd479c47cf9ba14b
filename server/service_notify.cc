#include "server/service_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "spdlog/spdlog.h"

namespace gpuprobe {

void NotifyServiceManager(std::string_view state) {
  const char* socket_name = std::getenv("NOTIFY_SOCKET");
  if (socket_name == nullptr || socket_name[0] == '\0') return;
  const std::string name = socket_name;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (name.size() >= sizeof(address.sun_path) || (name[0] != '/' && name[0] != '@')) {
    spdlog::warn("NOTIFY_SOCKET \"{}\" is neither a path nor an abstract name; not notifying",
                 name);
    return;
  }
  std::memcpy(address.sun_path, name.data(), name.size());
  if (name[0] == '@') address.sun_path[0] = '\0';  // the abstract namespace
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    spdlog::warn("cannot notify the service manager: socket: {}", std::strerror(errno));
    return;
  }
  const socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  if (sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
             reinterpret_cast<const sockaddr*>(&address), length) < 0) {
    spdlog::warn("cannot notify the service manager ({}): {}", name, std::strerror(errno));
  }
  close(fd);
}

}  // namespace gpuprobe
