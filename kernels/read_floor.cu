#include <cuda_runtime.h>

#include <vector>

#include "common/status_macros.h"
#include "kernels/cuda_status.h"
#include "kernels/read_floor.h"

namespace gpuprobe {
namespace {

constexpr int kLoadsInFlight = 4;

// 16-byte chunks of region r for one slot.
__host__ __device__ int64_t Chunks(const ReadRegion& r) { return r.bytes / 16; }

// 32-bit index arithmetic: the launcher refuses lists of 2^31 chunks or more.
__device__ __forceinline__ const uint4* ChunkAddress(const ReadFloorArgs& a, uint32_t q,
                                                     uint32_t per_slot, uint32_t first_chunks) {
  const uint32_t slot = q / per_slot;
  const uint32_t within = q - slot * per_slot;
  // Selects with conditionals, not a run-time array index (which would go to local memory).
  const bool first = within < first_chunks;
  const uint8_t* base = first ? a.regions[0].base : a.regions[1].base;
  const int64_t stride =
      first ? a.regions[0].expert_stride_bytes : a.regions[1].expert_stride_bytes;
  const int64_t offset = int64_t{first ? within : within - first_chunks} * 16;
  return reinterpret_cast<const uint4*>(base + a.sel[slot] * stride + offset);
}

__global__ void __launch_bounds__(kFloorThreads) ReadFloorKernel(ReadFloorArgs a) {
  const uint32_t first_chunks = static_cast<uint32_t>(Chunks(a.regions[0]));
  const uint32_t per_slot = first_chunks + static_cast<uint32_t>(Chunks(a.regions[1]));
  const uint32_t total = per_slot * static_cast<uint32_t>(a.slots);
  const uint32_t stride = gridDim.x * blockDim.x;
  uint32_t acc = 0;
  // Plain cached loads, like the sel kernels, so that warm and cold mean the same for both.
  for (uint32_t q = blockIdx.x * blockDim.x + threadIdx.x; q < total;
       q += kLoadsInFlight * stride) {
    uint4 v[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) {
      const uint32_t qk = q + k * stride;
      v[k] =
          qk < total ? __ldg(ChunkAddress(a, qk, per_slot, first_chunks)) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) acc += v[k].x + v[k].y + v[k].z + v[k].w;
  }
  for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, o);
  __shared__ uint32_t warp_acc[kFloorThreads / 32];
  if (threadIdx.x % 32 == 0) warp_acc[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t block_acc = 0;
    for (int w = 0; w < kFloorThreads / 32; ++w) block_acc += warp_acc[w];
    a.partials[blockIdx.x] = block_acc;
  }
}

}  // namespace

absl::Status LaunchReadFloor(const ReadFloorArgs& a, cudaStream_t stream) {
  if (a.sel == nullptr || a.partials == nullptr || a.slots < 1 || a.blocks < 1) {
    return absl::InvalidArgumentError("read floor: sel, partials, slots and blocks are required");
  }
  for (const ReadRegion& r : a.regions) {
    if (r.bytes % 16 != 0 || r.expert_stride_bytes % 16 != 0 ||
        reinterpret_cast<uintptr_t>(r.base) % 16 != 0 || (r.bytes > 0 && r.base == nullptr)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "read floor: region of %d bytes, stride %d: sizes, strides and bases must be "
          "16-byte multiples",
          r.bytes, r.expert_stride_bytes));
    }
  }
  const int64_t total = (Chunks(a.regions[0]) + Chunks(a.regions[1])) * a.slots;
  if (total >= (int64_t{1} << 31)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("read floor: %d chunks of 16 bytes; at most 2^31 - 1 per launch", total));
  }
  ReadFloorKernel<<<a.blocks, kFloorThreads, 0, stream>>>(a);
  CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> ReadFloorChecksum(const ReadFloorArgs& args, cudaStream_t stream) {
  CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(args.partials, 0xFF, args.blocks * sizeof(uint32_t), stream));
  RETURN_IF_ERROR(LaunchReadFloor(args, stream));
  std::vector<uint32_t> partials(args.blocks);
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(partials.data(), args.partials,
                                       args.blocks * sizeof(uint32_t), cudaMemcpyDeviceToHost,
                                       stream));
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  uint32_t checksum = 0;
  for (uint32_t p : partials) checksum += p;
  return checksum;
}

}  // namespace gpuprobe
