// Picks the backend a device worker runs: `cpu`, `cuda`, or `auto` (cuda when a CUDA device is
// visible and the build has CUDA, else cpu).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, MakeBackend("auto"));
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/device/backend.h"

namespace gpuprobe {

// `device` selects the CUDA device (cpu has only device 0). `cpu_repeat` > 1 makes the cpu
// backend run each timed kernel that many times per launch (CpuBackend).
absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(std::string_view name, int device = 0,
                                                     int cpu_repeat = 1);

// Devices a backend of this kind can use here: CUDA devices for cuda (and for auto when there
// are any), 1 for cpu.
int VisibleDevices(std::string_view name);

}  // namespace gpuprobe
