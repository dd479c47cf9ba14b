#pragma once

#include <string_view>

namespace gpuprobe {

// Tells the service manager (systemd's Type=notify) `state`, e.g. "READY=1" or "STOPPING=1", by
// libsystemd's sd_notify(3). Does nothing without $NOTIFY_SOCKET; a failure is logged, never
// fatal.
void NotifyServiceManager(std::string_view state);

}  // namespace gpuprobe
