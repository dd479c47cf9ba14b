// The XOR of every 32-bit word of the experts a list of slots names, codes and scales: what
// the pure-read floor kernel must report when it has read exactly those bytes.
//
//   uint32_t want = ExpertBytesChecksum(banks.gate_up, sel);
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/moe_banks.h"

namespace gpuprobe {

uint32_t ExpertBytesChecksum(const Nvfp4Bank& bank, const std::vector<int32_t>& sel);

}  // namespace gpuprobe
