#include "kernels/moe_banks.h"

#include "gtest/gtest.h"
#include "kernels/nvfp4.h"

namespace gpuprobe {
namespace {

constexpr MoeGeometry kSmall{.experts = 8, .hidden = 64, .ff = 32, .selected = 2};

TEST(MoeBanksTest, SizesFollowTheGeometry) {
  absl::StatusOr<MoeBanks> banks = SynthesizeBanks(kSmall, 7);
  ASSERT_TRUE(banks.ok()) << banks.status();
  EXPECT_EQ(banks->gate_up.codes.size(), 8u * 64 * 64 / 2);
  EXPECT_EQ(banks->gate_up.scales.size(), 8u * 64 * 64 / 16);
  EXPECT_EQ(banks->down.codes.size(), 8u * 64 * 32 / 2);
  EXPECT_EQ(banks->down.scales.size(), 8u * 64 * 32 / 16);
  EXPECT_EQ(banks->gate_up.codes.size() + banks->gate_up.scales.size(),
            static_cast<size_t>(kSmall.experts * GateUpExpertBytes(kSmall)));
  EXPECT_EQ(banks->down.codes.size() + banks->down.scales.size(),
            static_cast<size_t>(kSmall.experts * DownExpertBytes(kSmall)));
}

TEST(MoeBanksTest, ServingGeometryBytesMatchDesign) {
  const MoeGeometry serving{.experts = 512, .hidden = 2560, .ff = 640, .selected = 10};
  EXPECT_EQ(GateUpExpertBytes(serving), 1'843'200);
  EXPECT_EQ(DownExpertBytes(serving), 921'600);
}

TEST(MoeBanksTest, ScalesAreFinitePositiveAndCodesCoverEveryNibble) {
  absl::StatusOr<MoeBanks> banks = SynthesizeBanks(kSmall, 11);
  ASSERT_TRUE(banks.ok());
  for (const Nvfp4Bank* bank : {&banks->gate_up, &banks->down}) {
    for (uint8_t s : bank->scales) {
      ASSERT_FALSE(IsE4m3Nan(s));
      ASSERT_GT(*DecodeE4m3(s), 0.0);
    }
  }
  bool seen[16] = {};
  for (uint8_t c : banks->gate_up.codes) seen[c & 0xF] = seen[c >> 4] = true;
  for (int n = 0; n < 16; ++n) EXPECT_TRUE(seen[n]) << "nibble " << n;
}

TEST(MoeBanksTest, GateAndUpGlobalScalesAreSeparate) {
  absl::StatusOr<MoeBanks> banks = SynthesizeBanks(kSmall, 3);
  ASSERT_TRUE(banks.ok());
  ASSERT_EQ(banks->gate_global.size(), 8u);
  ASSERT_EQ(banks->up_global.size(), 8u);
  EXPECT_NE(banks->gate_global, banks->up_global);
}

TEST(MoeBanksTest, SameSeedSameBytesOtherSeedOtherBytes) {
  absl::StatusOr<MoeBanks> a = SynthesizeBanks(kSmall, 5), b = SynthesizeBanks(kSmall, 5),
                           c = SynthesizeBanks(kSmall, 6);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->gate_up.codes, b->gate_up.codes);
  EXPECT_EQ(a->down.scales, b->down.scales);
  EXPECT_EQ(a->up_global, b->up_global);
  EXPECT_NE(a->gate_up.codes, c->gate_up.codes);
}

TEST(MoeBanksTest, RefusesWidthsThatAreNotMultiplesOf16) {
  absl::StatusOr<MoeBanks> banks =
      SynthesizeBanks({.experts = 4, .hidden = 500, .ff = 32, .selected = 1}, 1);
  ASSERT_FALSE(banks.ok());
  EXPECT_EQ(banks.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpuprobe
