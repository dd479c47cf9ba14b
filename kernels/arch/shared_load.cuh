// Loads from this block's shared memory by 32-bit shared address (the address cp.async writes
// to), so that a place carried through a loop is one register: a generic pointer compared,
// converted for cp.async and inferred for loads became one induction register per form (three
// in the sel kernels' ring, kernel-decisions.md row 163). Volatile: they keep their order
// against the cp.async waits that make their bytes visible.
//
//   const uint4 v = arch::LoadShared128(arch::SharedAddress(smem) + 16 * lane);
#pragma once

#include <cstdint>

namespace gpuprobe::arch {

__device__ __forceinline__ uint4 LoadShared128(uint32_t address) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(address));
  return v;
}

__device__ __forceinline__ uint2 LoadShared64(uint32_t address) {
  uint2 v;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n" : "=r"(v.x), "=r"(v.y) : "r"(address));
  return v;
}

__device__ __forceinline__ uint32_t LoadShared32(uint32_t address) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(address));
  return v;
}

}  // namespace gpuprobe::arch
