// SplitMix64: a tiny, fully specified 64-bit generator. Banks, activations and routing are
// synthesised from it so that a seed means the same bytes on every compiler and platform
// (std::uniform_*_distribution is implementation-defined, std::mt19937_64 is slow to fill
// gigabytes of banks).
//
//   SeededRng rng(seed);
//   uint8_t byte = static_cast<uint8_t>(rng.Next());
//   double x = rng.Uniform(-1.0, 1.0);
#pragma once

#include <cstdint>

namespace gpuprobe {

class SeededRng {
 public:
  explicit SeededRng(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, bound); bound > 0. Lemire's multiply-shift: bias below 2^-32 for the
  // bounds used here (at most a few thousand experts).
  uint32_t Below(uint32_t bound) {
    return static_cast<uint32_t>(((Next() >> 32) * static_cast<uint64_t>(bound)) >> 32);
  }

  // Uniform in [lo, hi), 53 random bits.
  double Uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(Next() >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t state_;
};

// Mixes several values into one seed, so that each (seed, t, union) arm gets its own stream.
inline uint64_t MixSeed(uint64_t seed, uint64_t a, uint64_t b = 0) {
  SeededRng rng(seed ^ (a * 0xD1B54A32D192ED03ull) ^ (b * 0x8CB92BA72F3D8DD7ull));
  return rng.Next();
}

}  // namespace gpuprobe
