#include <cuda_runtime.h>

#include "kernels/cuda_status.h"
#include "kernels/read_buffer.h"
#include "kernels/read_buffer_fill.h"

namespace gpuprobe {
namespace {

__global__ void FillReadBufferKernel(uint32_t* words, int64_t count, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    words[i] = ReadBufferWord(seed, static_cast<uint64_t>(i));
  }
}

}  // namespace

absl::Status LaunchFillReadBuffer(uint32_t* words, int64_t count, uint64_t seed,
                                  cudaStream_t stream) {
  if (words == nullptr || count < 0) {
    return absl::InvalidArgumentError("fill: null buffer or negative count");
  }
  int device = 0, sms = 0;
  CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  FillReadBufferKernel<<<4 * sms, 256, 0, stream>>>(words, count, seed);
  CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

}  // namespace gpuprobe
