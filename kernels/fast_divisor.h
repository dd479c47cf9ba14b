// Division of non-negative ints by a divisor fixed per kernel launch, as a multiply-high and a
// shift (Granlund and Montgomery's method) instead of the twenty-odd instructions a division by
// a runtime value costs on the GPU. Exact for 0 <= n < 2^31 and 1 <= d < 2^31.
//
//   const FastDivisor tiles_per_group = FastDivisor::Of(80);    // host, once per launch
//   int group = tiles_per_group.Div(tile);                        // device
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GPUPROBE_FAST_DIV_FN __host__ __device__ __forceinline__
#else
#define GPUPROBE_FAST_DIV_FN inline
#endif

namespace gpuprobe {

struct FastDivisor {
  int32_t divisor = 1;
  uint32_t multiplier = 0;  // 0 for divisor 1
  uint32_t shift = 0;

  static FastDivisor Of(int32_t d) {
    FastDivisor f;
    f.divisor = d;
    if (d == 1) return f;
    // p = 31 + ceil(log2 d); multiplier = ceil(2^p / d) fits 32 bits, error below 1 for n < 2^31.
    uint32_t ceil_log2 = 0;
    while ((uint64_t{1} << ceil_log2) < static_cast<uint64_t>(d)) ++ceil_log2;
    const uint32_t p = 31 + ceil_log2;
    f.multiplier = static_cast<uint32_t>(((uint64_t{1} << p) + d - 1) / static_cast<uint64_t>(d));
    f.shift = p - 32;
    return f;
  }

  GPUPROBE_FAST_DIV_FN int32_t Div(int32_t n) const {
    if (multiplier == 0) return n;
#if defined(__CUDA_ARCH__)
    return static_cast<int32_t>(__umulhi(static_cast<uint32_t>(n), multiplier) >> shift);
#else
    return static_cast<int32_t>(
        ((static_cast<uint64_t>(static_cast<uint32_t>(n)) * multiplier) >> 32) >> shift);
#endif
  }
  GPUPROBE_FAST_DIV_FN int32_t Mod(int32_t n) const { return n - Div(n) * divisor; }
};

}  // namespace gpuprobe
