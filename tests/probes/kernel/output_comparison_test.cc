// A check's comparison of an output with the reference's: bitwise, and within tolerances in
// each dtype (half and bfloat16 decoded), NaN only matching NaN.
#include "server/probes/kernel/output_comparison.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;

template <typename T>
std::string Bytes(const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

v1::KernelTolerance Tolerance(double abs, double rel) {
  v1::KernelTolerance t;
  t.set_abs(abs);
  t.set_rel(rel);
  return t;
}

TEST(OutputComparisonTest, BitwiseCountsTheBytesThatDiffer) {
  v1::KernelTolerance bitwise;
  bitwise.set_bitwise(true);
  EXPECT_TRUE(CompareOutput("f32", bitwise, Bytes<float>({1, 2}), Bytes<float>({1, 2})).passed);
  const OutputComparison c =
      CompareOutput("f32", bitwise, Bytes<float>({1, 2}), Bytes<float>({1, 2.0000002f}));
  EXPECT_FALSE(c.passed);
  EXPECT_THAT(c.detail, HasSubstr("1 of 8 bytes differ, the first at byte 4"));
  // A buffer without a dtype is compared bitwise whatever the tolerance.
  EXPECT_FALSE(CompareOutput("", Tolerance(1, 1), "ab", "ac").passed);
  EXPECT_THAT(CompareOutput("f32", bitwise, "abcd", "ab").detail,
              HasSubstr("2 bytes against the reference's 4"));
}

TEST(OutputComparisonTest, ValuesWithinTheToleranceAgree) {
  const std::string ref = Bytes<float>({1.0f, -2.0f, 100.0f});
  EXPECT_TRUE(
      CompareOutput("f32", Tolerance(0, 1e-3), ref, Bytes<float>({1.0005f, -2.001f, 100.05f}))
          .passed);
  const OutputComparison c =
      CompareOutput("f32", Tolerance(0, 1e-3), ref, Bytes<float>({1.0f, -2.0f, 100.5f}));
  EXPECT_FALSE(c.passed);
  EXPECT_THAT(c.detail, HasSubstr("1 of 3 elements out of tolerance, the first at element 2 "
                                  "(100.5, the reference 100)"));
  EXPECT_TRUE(
      CompareOutput("i32", Tolerance(1, 0), Bytes<int32_t>({5, -7}), Bytes<int32_t>({6, -7}))
          .passed);
  EXPECT_FALSE(
      CompareOutput("i32", Tolerance(1, 0), Bytes<int32_t>({5, -7}), Bytes<int32_t>({7, -7}))
          .passed);
}

TEST(OutputComparisonTest, HalfAndBfloat16AreDecoded) {
  // 1.0 is 0x3c00 in half, 0x3f80 in bfloat16; 1.5 is 0x3e00 and 0x3fc0.
  EXPECT_TRUE(
      CompareOutput("f16", Tolerance(0.01, 0), Bytes<uint16_t>({0x3c00}), Bytes<uint16_t>({0x3c01}))
          .passed);  // 1.0009765625
  EXPECT_FALSE(
      CompareOutput("f16", Tolerance(0.01, 0), Bytes<uint16_t>({0x3c00}), Bytes<uint16_t>({0x3e00}))
          .passed);
  EXPECT_FALSE(
      CompareOutput("bf16", Tolerance(0.4, 0), Bytes<uint16_t>({0x3f80}), Bytes<uint16_t>({0x3fc0}))
          .passed);
  EXPECT_TRUE(
      CompareOutput("bf16", Tolerance(0.6, 0), Bytes<uint16_t>({0x3f80}), Bytes<uint16_t>({0x3fc0}))
          .passed);
}

TEST(OutputComparisonTest, APoisonedElementFailsUnlessTheReferenceHasNaNThere) {
  const float nan = std::nanf("");
  EXPECT_FALSE(
      CompareOutput("f32", Tolerance(1, 1), Bytes<float>({1.0f}), Bytes<float>({nan})).passed);
  EXPECT_TRUE(
      CompareOutput("f32", Tolerance(1, 1), Bytes<float>({nan}), Bytes<float>({nan})).passed);
  EXPECT_FALSE(
      CompareOutput("f32", Tolerance(1, 1), Bytes<float>({INFINITY}), Bytes<float>({1e30f}))
          .passed);
}

}  // namespace
}  // namespace gpuprobe
