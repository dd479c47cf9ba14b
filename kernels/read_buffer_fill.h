// Fills a device buffer with ReadBufferWord(seed, i) (kernels/read_buffer.h). Not a timed
// kernel: run once when a read-bandwidth buffer is allocated.
//
//   RETURN_IF_ERROR(LaunchFillReadBuffer(words, count, seed, stream));
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace gpuprobe {

absl::Status LaunchFillReadBuffer(uint32_t* words, int64_t count, uint64_t seed,
                                  cudaStream_t stream);

}  // namespace gpuprobe
