// The sum (mod 2^32) of every 32-bit word of the experts a list of slots names, codes and
// scales, once per slot: what the pure-read floor kernel must report when it has read exactly
// those bytes. A sum, not an XOR, so an expert read an even number of times still counts.
//
//   uint32_t want = ExpertBytesChecksum(banks.gate_up, sel);
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/moe_banks.h"

namespace gpuprobe {

uint32_t ExpertBytesChecksum(const Nvfp4Bank& bank, const std::vector<int32_t>& sel);

}  // namespace gpuprobe
