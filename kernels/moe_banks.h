// Synthetic NVFP4 weight banks for every expert of an MoE layer, in the checkpoint's layout:
// codes and block scales as separate arrays (a down row is 360 B interleaved, not 16-byte
// aligned; separate arrays avoid that trap), gate and up global scales kept apart per expert.
//
//   ASSIGN_OR_RETURN(MoeBanks banks, SynthesizeBanks(geometry, /*seed=*/1));
//   const uint8_t* expert3_codes = banks.gate_up.ExpertCodes(3);
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/moe_geometry.h"

namespace gpuprobe {

// One NVFP4 matrix per expert, all experts stacked: expert e's codes start at
// e * rows * cols / 2, its scales at e * rows * cols / 16 (row-major within an expert).
struct Nvfp4Bank {
  int64_t rows = 0;  // per expert
  int64_t cols = 0;  // inputs per row, a multiple of 16
  std::vector<uint8_t> codes;
  std::vector<uint8_t> scales;

  int64_t CodeBytesPerExpert() const { return rows * cols / 2; }
  int64_t ScaleBytesPerExpert() const { return rows * cols / kNvfp4BlockSize; }
  const uint8_t* ExpertCodes(int expert) const {
    return codes.data() + expert * CodeBytesPerExpert();
  }
  const uint8_t* ExpertScales(int expert) const {
    return scales.data() + expert * ScaleBytesPerExpert();
  }
};

struct MoeBanks {
  MoeGeometry geometry;
  // Rows 0..ff-1 are gate, ff..2ff-1 are up; `hidden` inputs per row.
  Nvfp4Bank gate_up;
  std::vector<float> gate_global;  // per expert
  std::vector<float> up_global;    // per expert
  // `hidden` rows of `ff` inputs.
  Nvfp4Bank down;
  std::vector<float> down_global;  // per expert
};

// Checks what every bank needs: positive sizes, hidden and ff multiples of 16.
absl::Status ValidateBankGeometry(const MoeGeometry& geometry);

// Fills banks for all experts from `seed`: any code nibble; block scales are positive e4m3
// normals in [0.125, 7.5] (never NaN, never zero, so no output is trivially zero); global
// scales uniform in [0.02, 0.08). Same geometry and seed, same bytes.
absl::StatusOr<MoeBanks> SynthesizeBanks(const MoeGeometry& geometry, uint64_t seed);

// Seeded activations, uniform in [-1, 1): `count` fp32 values.
std::vector<float> SynthesizeActivations(int64_t count, uint64_t seed);

}  // namespace gpuprobe
