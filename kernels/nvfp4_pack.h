// Bit-level helpers shared by the CUDA kernels and their host-side tests: how one 32-bit word
// of NVFP4 codes (8 elements, element 2j in the low nibble of byte j) becomes tensor-core
// operands, and which element of a 32-element chunk feeds which operand slot.
//
// Hopper has no fp4 conversion instruction. An e2m1 nibble (s e1 e0 m) placed in an e4m3 byte
// as (s 0 0 e1 e0 m 0 0) decodes, normal and subnormal alike, to exactly 2^-6 times its e2m1
// value; cvt.rn.f16x2.e4m3x2 then turns two such bytes into an exact f16 pair. Two registers
// hold a word's 8 elements: "even" bytes are elements 0, 2, 4, 6 and "odd" bytes 1, 3, 5, 7.
//
//   uint32_t even = EvenNibblesToE4m3(word);  // byte b = element 2b, times 2^-6
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GPUPROBE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define GPUPROBE_HOST_DEVICE inline
#endif

namespace gpuprobe {

// The e4m3 byte of an e2m1 nibble is worth 2^-6 of the nibble's value.
inline constexpr float kE4m3FromE2m1Scale = 64.0f;

// Written so that each is three or four ALU instructions: one mask, shifts, one three-input
// logic op.
GPUPROBE_HOST_DEVICE uint32_t EvenNibblesToE4m3(uint32_t word) {
  return ((word << 2) & 0x1C1C1C1Cu) | ((word & 0x08080808u) << 4);
}

GPUPROBE_HOST_DEVICE uint32_t OddNibblesToE4m3(uint32_t word) {
  return ((word >> 2) & 0x1C1C1C1Cu) | (word & 0x80808080u);
}

// A 16-byte chunk of a row holds 32 elements, consumed by 8 mma.m16n8k16 steps. In step s a
// thread supplies 4 elements of the chunk through operand slots 0..3 (a[0].lo, a[0].hi, a[2].lo,
// a[2].hi, and the same slots of b[0], b[1]). Step s reads word s/2: its even register when s
// is even, its odd register when s is odd; slot k is byte k of that register.
GPUPROBE_HOST_DEVICE int ChunkElementOfStepSlot(int step, int slot) {
  return 8 * (step / 2) + (step % 2) + 2 * slot;
}

}  // namespace gpuprobe
