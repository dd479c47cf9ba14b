// Fills a kernel job's buffer on the device from the job's seed: a constant, or seeded uniform
// or normal values of the buffer's dtype (element i from a counter-based generator of (seed, i),
// so every placement and every copy holds the same values). Not timed: run when a placement is
// made.
//
//   RETURN_IF_ERROR(LaunchBufferFill(ptr, count, "f32", Fill::kUniform, -1, 1, seed, stream));
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace gpuprobe {

enum class Fill { kConstant, kUniform, kNormal };

// `a`, `b`: the constant (a); uniform in [a, b); normal with mean a, standard deviation b.
// Integers take the uniform value's floor, clamped to the dtype's range. INVALID_ARGUMENT for a
// dtype that is not one of f64, f32, f16, bf16, i64, i32, i16, i8, u64, u32, u16, u8.
absl::Status LaunchBufferFill(void* data, uint64_t count, const std::string& dtype, Fill fill,
                              double a, double b, uint64_t seed, cudaStream_t stream);

}  // namespace gpuprobe
