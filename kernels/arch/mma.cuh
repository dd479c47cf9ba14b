// Tensor-core and packed-half PTX for sm_80 and later (the sel kernels build for sm_90a), as
// forced-inline device functions, CUTLASS's arch layer in miniature.
//
//   float d[4] = {};
//   arch::Mma16816(d, a0, a1, a2, a3, b0, b1);  // d += A (16x16 f16, row) x B (16x8 f16, col)
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

namespace gpuprobe::arch {

// D += A x B for one m16n8k16 tile: f16 inputs, f32 accumulators. The accumulation truncates
// (it is not IEEE round-to-nearest), so callers keep each chain short.
__device__ __forceinline__ void Mma16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                         uint32_t a3, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// The two e4m3 block scales of one chunk row (byte 0: block 0), as an f16 pair (exact; sm_89+).
__device__ __forceinline__ uint32_t ScalePairHalf2(uint32_t pair) {
  uint32_t h2;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(static_cast<uint16_t>(pair)));
  return h2;
}

// Two f16 products in one instruction, round to nearest.
__device__ __forceinline__ uint32_t MulHalf2(uint32_t a, uint32_t b) {
  uint32_t out;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(out) : "r"(a), "r"(b));
  return out;
}

}  // namespace gpuprobe::arch
