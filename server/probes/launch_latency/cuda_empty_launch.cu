// The empty launch on cuda: a __global__ function with no body, launched on the device's stream.
#include <cuda_runtime.h>

#include <memory>

#include "kernels/cuda_status.h"
#include "server/probes/launch_latency/empty_launch.h"

namespace gpuprobe {
namespace {

__global__ void EmptyKernel() {}

class CudaLaunch final : public DeviceLaunch {
 public:
  CudaLaunch(unsigned blocks, unsigned threads) : blocks_(blocks), threads_(threads) {}
  absl::Status Enqueue(DeviceStream stream) override {
    EmptyKernel<<<blocks_, threads_, 0, static_cast<cudaStream_t>(stream)>>>();
    CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return absl::OkStatus();
  }

 private:
  const unsigned blocks_;
  const unsigned threads_;
};

}  // namespace

std::unique_ptr<DeviceLaunch> CudaEmptyLaunch(unsigned blocks, unsigned threads) {
  return std::make_unique<CudaLaunch>(blocks, threads);
}

}  // namespace gpuprobe
