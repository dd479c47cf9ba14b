#include "kernels/nvfp4.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

TEST(E2m1Test, AllSixteenCodes) {
  const float expected[16] = {0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0f, -0.5, -1, -1.5, -2, -3, -4, -6};
  for (int code = 0; code < 16; ++code) {
    EXPECT_EQ(E2m1Value(static_cast<uint8_t>(code)), expected[code]) << "code " << code;
  }
  EXPECT_TRUE(std::signbit(E2m1Value(8)));  // bit 3 is the sign, also of zero
  EXPECT_EQ(E2m1Value(0xF7), 6.0f);         // only the low nibble counts
}

TEST(E4m3Test, Normals) {
  EXPECT_EQ(*DecodeE4m3(0x38), 1.0);  // exponent 7 = bias
  EXPECT_EQ(*DecodeE4m3(0x3C), 1.5);  // mantissa 4/8
  EXPECT_EQ(*DecodeE4m3(0x40), 2.0);
  EXPECT_EQ(*DecodeE4m3(0xB8), -1.0);                 // sign bit
  EXPECT_EQ(*DecodeE4m3(0x7E), 448.0);                // largest finite: 2^8 * 1.75
  EXPECT_EQ(*DecodeE4m3(0x08), std::ldexp(1.0, -6));  // smallest normal
  EXPECT_EQ(*DecodeE4m3(0x77), 240.0);                // 2^7 * 1.875
}

TEST(E4m3Test, Subnormals) {
  EXPECT_EQ(*DecodeE4m3(0x00), 0.0);
  EXPECT_TRUE(std::signbit(*DecodeE4m3(0x80)));
  EXPECT_EQ(*DecodeE4m3(0x01), std::ldexp(1.0, -9));        // 1/8 * 2^-6
  EXPECT_EQ(*DecodeE4m3(0x07), std::ldexp(7.0 / 8.0, -6));  // largest subnormal
  EXPECT_EQ(*DecodeE4m3(0x84), -std::ldexp(4.0 / 8.0, -6));
}

TEST(E4m3Test, BothNanBytesRejected) {
  for (uint8_t nan : {uint8_t{0x7F}, uint8_t{0xFF}}) {
    absl::StatusOr<double> v = DecodeE4m3(nan);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(v.status().message()), testing::HasSubstr("NaN"));
  }
  EXPECT_TRUE(std::isnan(E4m3Table()[0x7F]));
  EXPECT_TRUE(std::isnan(E4m3Table()[0xFF]));
}

TEST(E4m3Test, TableMatchesDecoder) {
  int finite = 0;
  for (int b = 0; b < 256; ++b) {
    absl::StatusOr<double> v = DecodeE4m3(static_cast<uint8_t>(b));
    if (!v.ok()) continue;
    EXPECT_EQ(E4m3Table()[b], *v) << "byte " << b;
    ++finite;
  }
  EXPECT_EQ(finite, 254);
}

}  // namespace
}  // namespace gpuprobe
