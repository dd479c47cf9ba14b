#include "kernels/moe_reference.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/nvfp4.h"

namespace gpuprobe {
namespace {

constexpr MoeGeometry kTiny{.experts = 2, .hidden = 16, .ff = 16, .selected = 1};
constexpr uint8_t kScaleOne = 0x38;  // e4m3 1.0
constexpr uint8_t kScaleTwo = 0x40;  // e4m3 2.0

double Silu(double v) { return v / (1.0 + std::exp(-v)); }

// Banks whose every code byte is `code_byte` and every scale 1.0; globals as given.
MoeBanks UniformBanks(uint8_t code_byte, float gate_global, float up_global, float down_global) {
  MoeBanks b{.geometry = kTiny};
  b.gate_up = {.rows = 32, .cols = 16};
  b.gate_up.codes.assign(2 * 32 * 8, code_byte);
  b.gate_up.scales.assign(2 * 32, kScaleOne);
  b.down = {.rows = 16, .cols = 16};
  b.down.codes.assign(2 * 16 * 8, code_byte);
  b.down.scales.assign(2 * 16, kScaleOne);
  b.gate_global = {gate_global, gate_global};
  b.up_global = {up_global, up_global};
  b.down_global = {down_global, down_global};
  return b;
}

TEST(SelGuSiluReferenceTest, FusesSiluOfGateTimesUpWithSeparateGlobals) {
  // Code 0x22: both nibbles are e2m1 1.0. Each row sums 16 * 1.0 * 0.1 = 1.6 before globals,
  // so gate = 1.6 * 2 = 3.2 and up = 1.6 * 0.5 = 0.8.
  const MoeBanks banks = UniformBanks(0x22, 2.0f, 0.5f, 1.0f);
  const std::vector<float> x(16, 0.1f);
  const std::vector<int32_t> sel = {1};
  std::vector<double> h(16);
  ASSERT_TRUE(SelGuSiluReference(banks, x, sel, absl::MakeSpan(h)).ok());
  const double row = 16 * 1.0 * static_cast<double>(0.1f);
  for (double v : h) EXPECT_DOUBLE_EQ(v, Silu(row * 2.0) * (row * 0.5));
  // Swapping the globals must change the answer: silu(0.8) * 3.2 != silu(3.2) * 0.8.
  const MoeBanks swapped = UniformBanks(0x22, 0.5f, 2.0f, 1.0f);
  std::vector<double> h_swapped(16);
  ASSERT_TRUE(SelGuSiluReference(swapped, x, sel, absl::MakeSpan(h_swapped)).ok());
  EXPECT_DOUBLE_EQ(h_swapped[0], Silu(row * 0.5) * (row * 2.0));
  EXPECT_GT(std::abs(h_swapped[0] - h[0]), 0.1);
}

TEST(SelGuSiluReferenceTest, LowNibbleIsTheEvenElementAndScalesApplyPerBlock) {
  MoeBanks banks = UniformBanks(0x00, 1.0f, 1.0f, 1.0f);
  // Expert 0, gate row 0: byte 0 = 0x71 -> element 0 is code 1 (0.5), element 1 is code 7 (6).
  banks.gate_up.codes[0] = 0x71;
  banks.gate_up.scales[0] = kScaleTwo;
  // Up row 0 (row ff = 16) is all code 0x2 (1.0).
  for (int j = 0; j < 8; ++j) banks.gate_up.codes[16 * 8 + j] = 0x22;
  std::vector<float> x(16, 0.0f);
  x[1] = 1.0f;  // selects element 1 (the high nibble)
  std::vector<double> h(16);
  ASSERT_TRUE(SelGuSiluReference(banks, x, std::vector<int32_t>{0}, absl::MakeSpan(h)).ok());
  // gate = 6 * scale 2 = 12; up = 1.0 * x[1] = 1.
  EXPECT_DOUBLE_EQ(h[0], Silu(12.0) * 1.0);
  EXPECT_DOUBLE_EQ(h[1], 0.0);  // gate row 1 is all zeros
}

TEST(SelDownReferenceTest, EachSlotReadsItsOwnExpertAndInput) {
  MoeBanks banks = UniformBanks(0x22, 1.0f, 1.0f, 0.25f);
  banks.down_global[1] = 4.0f;
  const std::vector<float> h = [] {
    std::vector<float> v(32, 1.0f);
    for (int j = 16; j < 32; ++j) v[j] = 2.0f;
    return v;
  }();
  std::vector<double> y(32);
  ASSERT_TRUE(SelDownReference(banks, h, std::vector<int32_t>{0, 1}, absl::MakeSpan(y)).ok());
  EXPECT_DOUBLE_EQ(y[0], 16 * 1.0 * 1.0 * 0.25);  // slot 0: expert 0, h = 1
  EXPECT_DOUBLE_EQ(y[16], 16 * 1.0 * 2.0 * 4.0);  // slot 1: expert 1, h = 2
}

// An independent path: decode each weight to a dense float64 matrix, then multiply.
TEST(SelGuSiluReferenceTest, MatchesDenseDecodeOnRandomBanks) {
  const MoeGeometry g{.experts = 4, .hidden = 64, .ff = 32, .selected = 2};
  absl::StatusOr<MoeBanks> banks = SynthesizeBanks(g, 99);
  ASSERT_TRUE(banks.ok());
  const std::vector<float> x = SynthesizeActivations(2 * 64, 5);
  const std::vector<int32_t> sel = {3, 1, 1, 0};  // 2 tokens x 2 selected
  std::vector<double> h(4 * 32);
  ASSERT_TRUE(SelGuSiluReference(*banks, x, sel, absl::MakeSpan(h)).ok());
  const Nvfp4Bank& w = banks->gate_up;
  auto weight = [&](int e, int row, int col) {
    const uint8_t byte = w.ExpertCodes(e)[row * 32 + col / 2];
    const uint8_t code = col % 2 == 0 ? byte & 0xF : byte >> 4;
    return E2m1Value(code) * *DecodeE4m3(w.ExpertScales(e)[row * 4 + col / 16]);
  };
  for (int s = 0; s < 4; ++s) {
    for (int j = 0; j < 32; ++j) {
      double gate = 0, up = 0;
      for (int k = 0; k < 64; ++k) {
        gate += weight(sel[s], j, k) * x[(s / 2) * 64 + k];
        up += weight(sel[s], 32 + j, k) * x[(s / 2) * 64 + k];
      }
      gate *= banks->gate_global[sel[s]];
      up *= banks->up_global[sel[s]];
      EXPECT_NEAR(h[s * 32 + j], Silu(gate) * up, 1e-9 * (1 + std::abs(Silu(gate) * up)));
    }
  }
}

TEST(SelGuSiluReferenceTest, RefusesBadShapesAndExperts) {
  const MoeBanks banks = UniformBanks(0x22, 1.0f, 1.0f, 1.0f);
  std::vector<double> h(16);
  EXPECT_FALSE(
      SelGuSiluReference(banks, std::vector<float>(15), std::vector<int32_t>{0}, absl::MakeSpan(h))
          .ok());
  EXPECT_FALSE(
      SelGuSiluReference(banks, std::vector<float>(16), std::vector<int32_t>{2}, absl::MakeSpan(h))
          .ok());
}

}  // namespace
}  // namespace gpuprobe
