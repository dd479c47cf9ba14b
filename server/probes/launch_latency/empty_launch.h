// The launch-latency probe's device code: a launch of a kernel that does nothing, over a grid
// of `blocks` blocks of `threads` threads. On cuda an empty __global__ function; on the cpu a
// loop over the blocks with an empty body that the compiler may not remove.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<DeviceLaunch> launch, EmptyLaunchOn(device, 1, 32));
//   ASSIGN_OR_RETURN(double us, LaunchTimer(device).Time(*launch, timing));
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "server/device/backend.h"

namespace gpuprobe {

// UNIMPLEMENTED for a backend it has no code for; INVALID_ARGUMENT for a grid outside
// [1, 2^31 - 1] blocks of [1, 1024] threads.
absl::StatusOr<std::unique_ptr<DeviceLaunch>> EmptyLaunchOn(Backend& device, int64_t blocks,
                                                            int threads);

// The cuda implementation EmptyLaunchOn picks (only where built with CUDA).
std::unique_ptr<DeviceLaunch> CudaEmptyLaunch(unsigned blocks, unsigned threads);

}  // namespace gpuprobe
