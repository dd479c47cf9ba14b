#ifndef GPUPROBE_SERVER_SERVICE_NOTIFY_H_
#define GPUPROBE_SERVER_SERVICE_NOTIFY_H_

#include <string_view>

namespace gpuprobe {

// Tells the service manager (systemd's Type=notify, sd_notify(3)'s protocol) `state`, e.g.
// "READY=1" or "STOPPING=1": one datagram to the socket named by $NOTIFY_SOCKET (a path, or an
// abstract name starting with '@'). Does nothing without $NOTIFY_SOCKET; a failure is logged,
// never fatal.
void NotifyServiceManager(std::string_view state);

}  // namespace gpuprobe

#endif  // GPUPROBE_SERVER_SERVICE_NOTIFY_H_
