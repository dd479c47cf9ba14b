#include "server/daemon/service_notify.h"

#include <systemd/sd-daemon.h>

#include <cstring>
#include <string>

#include "spdlog/spdlog.h"

namespace gpuprobe {

void NotifyServiceManager(std::string_view state) {
  const std::string text(state);
  // sd_notify: 0 without $NOTIFY_SOCKET (not under a service manager), < 0 (-errno) on failure.
  if (const int r = sd_notify(/*unset_environment=*/0, text.c_str()); r < 0) {
    spdlog::warn("cannot notify the service manager ({}): {}", text, std::strerror(-r));
  }
}

}  // namespace gpuprobe
