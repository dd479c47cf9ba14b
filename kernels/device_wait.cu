#include <cuda_runtime.h>

#include "absl/strings/str_format.h"
#include "kernels/cuda_status.h"
#include "kernels/device_wait.h"

namespace gpuprobe {
namespace {

__device__ __forceinline__ uint64_t GlobalTimerNs() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

// @warning Holds one SM slot for `ns`; launched <<<1, 1>>> on the timed stream only.
__global__ void DeviceWaitKernel(uint64_t ns) {
  const uint64_t start = GlobalTimerNs();
  while (GlobalTimerNs() - start < ns) {
  }
}

}  // namespace

absl::Status LaunchDeviceWait(int64_t ns, cudaStream_t stream) {
  if (ns <= 0 || ns > 1'000'000'000) {
    return absl::InvalidArgumentError(
        absl::StrFormat("device wait: %d ns is outside (0, 1e9]", ns));
  }
  DeviceWaitKernel<<<1, 1, 0, stream>>>(static_cast<uint64_t>(ns));
  CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

}  // namespace gpuprobe
