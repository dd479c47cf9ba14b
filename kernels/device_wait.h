// A wait on the device: one thread spins on the global timer (%globaltimer, nanoseconds) until
// `ns` have passed since it started. Not a measured kernel: the timers put it inside a timed
// sample as a known slowdown for testing what judges the rows (gpuprobed --inject-delay-ns).
// What it adds is `ns` plus the launch of one more kernel (inside a CUDA graph, about 0.5 us on
// an H200: DESIGN.md's empty-kernel figure).
//
//   RETURN_IF_ERROR(LaunchDeviceWait(2500, stream));
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace gpuprobe {

// INVALID_ARGUMENT unless 0 < ns <= 1 s.
absl::Status LaunchDeviceWait(int64_t ns, cudaStream_t stream);

}  // namespace gpuprobe
