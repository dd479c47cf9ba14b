#include "kernels/moe_banks.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "common/seeded_rng.h"
#include "common/status_macros.h"

namespace gpuprobe {
namespace {

// Exponent fields 4..9 (2^-3 .. 2^2) with any mantissa: magnitudes 0.125 .. 7.5.
constexpr int kScaleMinExponent = 4;
constexpr int kScaleExponentCount = 6;

void FillBytes(SeededRng& rng, std::vector<uint8_t>& bytes) {
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    const uint64_t word = rng.Next();
    std::memcpy(bytes.data() + i, &word, 8);
  }
  for (; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(rng.Next());
}

void FillScales(SeededRng& rng, std::vector<uint8_t>& scales) {
  for (uint8_t& s : scales) {
    const uint32_t r = static_cast<uint32_t>(rng.Next());
    const int exponent = kScaleMinExponent + static_cast<int>((r >> 3) % kScaleExponentCount);
    s = static_cast<uint8_t>((exponent << 3) | (r & 0x7));
  }
}

std::vector<float> GlobalScales(SeededRng& rng, int experts) {
  std::vector<float> out(experts);
  for (float& g : out) g = static_cast<float>(rng.Uniform(0.02, 0.08));
  return out;
}

Nvfp4Bank MakeBank(SeededRng& rng, int experts, int64_t rows, int64_t cols) {
  Nvfp4Bank bank{.rows = rows, .cols = cols};
  bank.codes.resize(experts * bank.CodeBytesPerExpert());
  bank.scales.resize(experts * bank.ScaleBytesPerExpert());
  FillBytes(rng, bank.codes);
  FillScales(rng, bank.scales);
  return bank;
}

}  // namespace

absl::Status ValidateBankGeometry(const MoeGeometry& g) {
  if (g.experts < 1 || g.hidden < 1 || g.ff < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "experts, hidden and ff must be positive (got %d, %d, %d)", g.experts, g.hidden, g.ff));
  }
  if (g.hidden % kNvfp4BlockSize != 0 || g.ff % kNvfp4BlockSize != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "hidden (%d) and ff (%d) must be multiples of %d", g.hidden, g.ff, kNvfp4BlockSize));
  }
  return absl::OkStatus();
}

absl::StatusOr<MoeBanks> SynthesizeBanks(const MoeGeometry& g, uint64_t seed) {
  RETURN_IF_ERROR(ValidateBankGeometry(g));
  SeededRng rng(seed);
  MoeBanks banks{.geometry = g};
  banks.gate_up = MakeBank(rng, g.experts, 2 * static_cast<int64_t>(g.ff), g.hidden);
  banks.gate_global = GlobalScales(rng, g.experts);
  banks.up_global = GlobalScales(rng, g.experts);
  banks.down = MakeBank(rng, g.experts, g.hidden, g.ff);
  banks.down_global = GlobalScales(rng, g.experts);
  return banks;
}

std::vector<float> SynthesizeActivations(int64_t count, uint64_t seed) {
  SeededRng rng(seed);
  std::vector<float> x(count);
  for (float& v : x) v = static_cast<float>(rng.Uniform(-1.0, 1.0));
  return x;
}

}  // namespace gpuprobe
