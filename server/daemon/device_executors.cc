#include "server/daemon/device_executors.h"

#include <optional>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "server/device/backend_factory.h"
#include "server/jobs/worker_main.h"
#include "server/jobs/worker_process.h"
#include "server/measure/cold_cache.h"
#include "server/probes/command/command_registrations.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

// A device that runs jobs, with its cold-cache flush memory taken before any probe's buffers:
// every job then finds the same memory layout, and no cold job fails for want of that memory.
absl::StatusOr<std::unique_ptr<Backend>> MakeDevice(const DaemonOptions& options, int device) {
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend,
                   MakeBackend(options.backend, device,
                               {.cpu_repeat = options.cpu_repeat,
                                .wait_ns_per_sample = options.inject_delay_ns}));
  RETURN_IF_ERROR(ColdCache::Of(*backend).status());
  return backend;
}

absl::StatusOr<std::unique_ptr<DeviceExecutor>> MakeExecutor(const DaemonOptions& options,
                                                             int device) {
  if (options.isolation == "none") {
    ASSIGN_OR_RETURN(std::unique_ptr<Backend> in_process, MakeDevice(options, device));
    return std::unique_ptr<DeviceExecutor>(
        std::make_unique<InProcessExecutor>(std::move(in_process)));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<WorkerProcessExecutor> worker,
                   WorkerProcessExecutor::Start("/proc/self/exe", options.WorkerArguments(device)));
  return std::unique_ptr<DeviceExecutor>(std::move(worker));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const ProbeRegistry>> ProbesOf(const DaemonOptions& options) {
  ASSIGN_OR_RETURN(std::vector<v1::CommandRegistration> commands,
                   LoadCommandRegistrations(options.probe_commands, options.probe_commands_file));
  ASSIGN_OR_RETURN(ProbeRegistry probes, ProbeRegistry::Builtin({.commands = std::move(commands)}));
  return std::make_shared<const ProbeRegistry>(std::move(probes));
}

absl::StatusOr<std::vector<std::unique_ptr<DeviceExecutor>>> DeviceExecutorsOf(
    const DaemonOptions& options) {
  const std::optional<std::vector<int>>& requested = options.devices;
  std::vector<int> devices = requested.value_or(std::vector<int>{0});
  std::vector<std::unique_ptr<DeviceExecutor>> executors;
  ASSIGN_OR_RETURN(executors.emplace_back(), MakeExecutor(options, devices[0]));
  // How many devices there are: the first worker counted them, where the driver is loaded.
  const int visible = options.isolation == "process"
                          ? static_cast<WorkerProcessExecutor&>(*executors[0]).visible_devices()
                          : VisibleDevices(options.backend);
  if (!requested.has_value()) {
    for (int i = 1; i < visible; ++i) devices.push_back(i);
  }
  for (size_t i = 1; i < devices.size(); ++i) {
    if (devices[i] >= visible) {
      return absl::InvalidArgumentError(
          absl::StrFormat("devices: %d is not a device here (%d visible)", devices[i], visible));
    }
    ASSIGN_OR_RETURN(executors.emplace_back(), MakeExecutor(options, devices[i]));
  }
  return executors;
}

int ServeAsWorker(const DaemonOptions& options) {
  absl::StatusOr<std::unique_ptr<Backend>> backend = MakeDevice(options, options.device);
  if (!backend.ok()) {
    spdlog::error("worker: {}", backend.status().ToString());
    return 2;
  }
  absl::StatusOr<std::shared_ptr<const ProbeRegistry>> probes = ProbesOf(options);
  if (!probes.ok()) {
    spdlog::error("worker: {}", probes.status().ToString());
    return 2;
  }
  return RunWorker(options.worker_fd, *std::move(backend), VisibleDevices(options.backend),
                   **probes);
}

}  // namespace gpuprobe
