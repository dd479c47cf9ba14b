// The pure-read floor: a kernel that reads exactly the bytes an arm's per-slot kernel reads
// (each slot's expert codes and block scales, with the same routing) and computes nothing but
// a checksum (the wrapping sum of the words), which is both its side effect (so the loads
// cannot be dropped) and proof, against ExpertBytesChecksum on the host, that it read those
// bytes. Also the card's streaming-read
// calibration, over one large region.
//
// Tuned for the H200: 16-byte loads, four independent loads in flight per thread, and a grid of
// kFloorBlocksPerSm blocks per multiprocessor striding over the whole list.
//
//   RETURN_IF_ERROR(LaunchReadFloor(args, stream));
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpuprobe {

inline constexpr int kFloorThreads = 512;
inline constexpr int kFloorBlocksPerSm = 4;

// One per-expert region of a bank: expert e's bytes are [base + e*stride, + bytes).
struct ReadRegion {
  const uint8_t* base = nullptr;
  int64_t expert_stride_bytes = 0;
  int64_t bytes = 0;  // a multiple of 16; base and stride 16-byte aligned
};

struct ReadFloorArgs {
  ReadRegion regions[2];         // codes and scales; a region with bytes == 0 is skipped
  const int32_t* sel = nullptr;  // device: expert of each slot
  int slots = 0;
  int blocks = 0;                // grid size: kFloorBlocksPerSm * multiprocessors
  uint32_t* partials = nullptr;  // device, [blocks]: each block's sum of the words it read
};

absl::Status LaunchReadFloor(const ReadFloorArgs& args, cudaStream_t stream);

// The floor's checksum of what it read (its blocks' partials summed), from one untimed launch;
// the partials are poisoned first, so that a kernel that wrote none cannot pass by luck.
// Synchronizes the stream.
absl::StatusOr<uint32_t> ReadFloorChecksum(const ReadFloorArgs& args, cudaStream_t stream);

}  // namespace gpuprobe
