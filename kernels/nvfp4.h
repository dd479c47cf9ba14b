// The NVFP4 number format (NVIDIA ModelOpt checkpoints): 4-bit e2m1 codes, one fp8 e4m3 scale
// per 16 consecutive inputs of a row, and an fp32 global scale per tensor.
//
//   value = E2m1Value(code) * DecodeE4m3(scale_byte) * global_scale
//
// Two codes share a byte: element 2j is the LOW nibble, element 2j+1 the high nibble.
//
//   ASSIGN_OR_RETURN(double scale, DecodeE4m3(0x38));  // 1.0
//   double v = E2m1Value(0xB);                         // -1.5
#pragma once

#include <array>
#include <cstdint>

#include "absl/status/statusor.h"

namespace gpuprobe {

// e2m1 code -> value: bit 3 is the sign, codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6.
inline constexpr std::array<float, 16> kE2m1Values = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,
                                                      4.0f,  6.0f,  -0.0f, -0.5f, -1.0f, -1.5f,
                                                      -2.0f, -3.0f, -4.0f, -6.0f};

inline float E2m1Value(uint8_t code) { return kE2m1Values[code & 0xF]; }

// e4m3 (fn variant: no infinities) has exactly two NaN encodings.
inline constexpr bool IsE4m3Nan(uint8_t byte) { return (byte & 0x7F) == 0x7F; }

// Decodes an e4m3 byte: 1 sign bit, 4 exponent bits (bias 7), 3 mantissa bits; exponent 0 is
// subnormal (m/8 * 2^-6). Largest finite magnitude 448. 0x7F and 0xFF are NaN and are refused
// with INVALID_ARGUMENT: they must never appear in a bank.
absl::StatusOr<double> DecodeE4m3(uint8_t byte);

// DecodeE4m3 for all 256 bytes, NaN for the two NaN bytes: for inner loops over banks that
// were validated when they were built.
const std::array<double, 256>& E4m3Table();

}  // namespace gpuprobe
