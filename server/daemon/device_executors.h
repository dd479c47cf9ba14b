// What runs the daemon's jobs, from its options: the probes it serves, and an executor per
// served device (a worker child process each with --isolation process, the default, so that a
// crash or a sticky CUDA error costs one job; or a backend in the daemon's own process). The
// worker child's side is here too: the same binary started with --worker-fd.
//
//   ASSIGN_OR_RETURN(auto probes, ProbesOf(options));
//   ASSIGN_OR_RETURN(auto executors, DeviceExecutorsOf(options));
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "server/jobs/device_executor.h"
#include "server/options/daemon_options.h"
#include "server/probes/registry.h"

namespace gpuprobe {

// The probes this daemon (and each of its workers) serves; INVALID_ARGUMENT names a bad
// --probe-command or --probe-commands.
absl::StatusOr<std::shared_ptr<const ProbeRegistry>> ProbesOf(const DaemonOptions& options);

// One executor per device that --devices names (all visible ones by default); INVALID_ARGUMENT
// names a device that is not there, and a device's start-up error comes as it came.
absl::StatusOr<std::vector<std::unique_ptr<DeviceExecutor>>> DeviceExecutorsOf(
    const DaemonOptions& options);

// The worker child process (options.worker_fd set): runs its device's jobs until the daemon
// closes the socket. Returns the process's exit code; a start-up error is logged and gives 2.
int ServeAsWorker(const DaemonOptions& options);

}  // namespace gpuprobe
