// Picks the backend a device worker runs: `cpu`, `cuda`, or `auto` (cuda when a CUDA device is
// visible and the build has CUDA, else cpu).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, MakeBackend("auto"));
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/device/backend.h"

namespace gpuprobe {

// Known slowdowns for testing what judges rows; each is stamped on the device's description.
struct InjectedSlowdown {
  int cpu_repeat = 1;              // > 1: the cpu runs each timed kernel this many times a launch
  int64_t wait_ns_per_sample = 0;  // > 0: Backend::injected_wait_ns(), either backend
};

// `device` selects the CUDA device (cpu has only device 0).
absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(std::string_view name, int device = 0,
                                                     InjectedSlowdown slowdown = {});

// Devices a backend of this kind can use here: CUDA devices for cuda (and for auto when there
// are any), 1 for cpu.
int VisibleDevices(std::string_view name);

}  // namespace gpuprobe
