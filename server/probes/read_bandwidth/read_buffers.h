// The read-bandwidth probe's device code: buffers of seeded words (ReadBufferWord,
// kernels/read_buffer.h) and the streaming read of each, a launch that the measurement module's
// LaunchTimer times. One implementation per backend: a host loop on the cpu, the floor kernel on
// cuda.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<ReadBuffers> buffers, ReadBuffersOn(device));
//   ASSIGN_OR_RETURN(int buffer, buffers->Allocate(bytes, seed));
//   ASSIGN_OR_RETURN(double us, LaunchTimer(device).Time(buffers->Read(buffer), timing));
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "server/device/backend.h"

namespace gpuprobe {

class ReadBuffers {
 public:
  virtual ~ReadBuffers() = default;

  // A buffer of `bytes` holding ReadBufferWord(seed, i); its index. INVALID_ARGUMENT unless
  // `bytes` is a positive multiple of 16.
  absl::StatusOr<int> Allocate(int64_t bytes, uint64_t seed);
  // The streaming read of every word of buffer `index` (from Allocate).
  virtual DeviceLaunch& Read(int index) = 0;
  // The read's checksum of the buffer's words (their wrapping sum), from one untimed read.
  virtual absl::StatusOr<uint32_t> Checksum(int index) = 0;

 private:
  virtual absl::StatusOr<int> AllocateChecked(int64_t bytes, uint64_t seed) = 0;
};

// The device code for `device`'s backend; UNIMPLEMENTED for a backend it has none for.
absl::StatusOr<std::unique_ptr<ReadBuffers>> ReadBuffersOn(Backend& device);
using ReadBuffersFactory = std::function<decltype(ReadBuffersOn)>;

// The implementations ReadBuffersOn picks from (cuda only where built with CUDA).
std::unique_ptr<ReadBuffers> CpuReadBuffers();
std::unique_ptr<ReadBuffers> CudaReadBuffers(Backend& device);

}  // namespace gpuprobe
