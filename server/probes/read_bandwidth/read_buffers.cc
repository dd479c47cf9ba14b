#include "server/probes/read_bandwidth/read_buffers.h"

#include "absl/strings/str_format.h"

namespace gpuprobe {

absl::StatusOr<int> ReadBuffers::Allocate(int64_t bytes, uint64_t seed) {
  if (bytes <= 0 || bytes % 16 != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("size_bytes: %d is not a positive multiple of 16", bytes));
  }
  return AllocateChecked(bytes, seed);
}

absl::StatusOr<std::unique_ptr<ReadBuffers>> ReadBuffersOn(Backend& device) {
  if (device.Name() == "cpu") return CpuReadBuffers();
#if GPUPROBE_HAVE_CUDA
  if (device.Name() == "cuda") return CudaReadBuffers(device);
#endif
  return absl::UnimplementedError(
      absl::StrFormat("the %s backend has no read buffers (read-bandwidth)", device.Name()));
}

}  // namespace gpuprobe
