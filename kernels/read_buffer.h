// The words of a read-bandwidth buffer: word i of a buffer seeded `seed` is a hash of both, the
// same on the host and the device, so the host knows what a read kernel must sum without
// reading the device's copy. Random words keep compression out of the read (no zero pages).
//
//   LaunchFillReadBuffer(words, count, seed, stream);          // device
//   uint32_t want = ReadBufferChecksum(count, seed);           // host: the words' wrapping sum
#pragma once

#include <cstdint>

#include "kernels/arch/host_device.h"

namespace gpuprobe {

// SplitMix64's finalizer of (seed, index), folded to 32 bits.
GPUPROBE_HD inline uint32_t ReadBufferWord(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<uint32_t>(z ^ (z >> 32));
}

// The wrapping sum of the first `count` words: what the floor kernel reports for the buffer.
uint32_t ReadBufferChecksum(int64_t count, uint64_t seed);

}  // namespace gpuprobe
