#include "kernels/fast_divisor.h"

#include <cstdint>
#include <random>

#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

TEST(FastDivisorTest, EqualsIntegerDivisionForSmallDivisorsAndEdgeDividends) {
  for (int32_t d = 1; d <= 4096; ++d) {
    const FastDivisor f = FastDivisor::Of(d);
    for (int32_t n : {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, 1000003, INT32_MAX - 1, INT32_MAX}) {
      if (n < 0) continue;
      ASSERT_EQ(f.Div(n), n / d) << n << " / " << d;
      ASSERT_EQ(f.Mod(n), n % d) << n << " % " << d;
    }
    for (int32_t n = 0; n < 20000; ++n) ASSERT_EQ(f.Div(n), n / d) << n << " / " << d;
  }
}

TEST(FastDivisorTest, EqualsIntegerDivisionOnFreshRandomOperands) {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_int_distribution<int32_t> any(0, INT32_MAX), divisor(1, INT32_MAX);
  for (int i = 0; i < 2000000; ++i) {
    const int32_t n = any(rng), d = i % 2 == 0 ? divisor(rng) % 100000 + 1 : divisor(rng);
    ASSERT_EQ(FastDivisor::Of(d).Div(n), n / d) << n << " / " << d;
  }
}

}  // namespace
}  // namespace gpuprobe
