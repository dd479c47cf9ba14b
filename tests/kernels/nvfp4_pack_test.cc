#include "kernels/nvfp4_pack.h"

#include <set>

#include "common/seeded_rng.h"
#include "gtest/gtest.h"
#include "kernels/nvfp4.h"

namespace gpuprobe {
namespace {

double ByteValue(uint32_t reg, int byte) {
  return *DecodeE4m3(static_cast<uint8_t>(reg >> (8 * byte))) * kE4m3FromE2m1Scale;
}

TEST(Nvfp4PackTest, EveryNibbleBecomesAnE4m3ByteWorthItsValueTimes2ToTheMinus6) {
  for (uint32_t nibble = 0; nibble < 16; ++nibble) {
    for (int position = 0; position < 8; ++position) {
      const uint32_t word = nibble << (4 * position);
      const uint32_t reg = position % 2 == 0 ? EvenNibblesToE4m3(word) : OddNibblesToE4m3(word);
      EXPECT_EQ(ByteValue(reg, position / 2), E2m1Value(static_cast<uint8_t>(nibble)))
          << "nibble " << nibble << " at position " << position;
    }
  }
}

TEST(Nvfp4PackTest, RandomWordsDecodeElementByElement) {
  SeededRng rng(17);
  for (int trial = 0; trial < 1000; ++trial) {
    const uint32_t word = static_cast<uint32_t>(rng.Next());
    const uint32_t even = EvenNibblesToE4m3(word), odd = OddNibblesToE4m3(word);
    for (int e = 0; e < 8; ++e) {
      const double want = E2m1Value(static_cast<uint8_t>(word >> (4 * e)));
      EXPECT_EQ(ByteValue(e % 2 == 0 ? even : odd, e / 2), want) << std::hex << word;
    }
  }
}

TEST(Nvfp4PackTest, StepsAndSlotsCoverEveryElementOfAChunkOnce) {
  std::set<int> seen;
  for (int step = 0; step < 8; ++step) {
    for (int slot = 0; slot < 4; ++slot) {
      const int element = ChunkElementOfStepSlot(step, slot);
      EXPECT_TRUE(seen.insert(element).second) << "element " << element << " twice";
      // The element must be what the kernel's register holds in that slot: word step/2,
      // even register on even steps, byte `slot` of it.
      EXPECT_EQ(element / 8, step / 2);
      EXPECT_EQ(element % 8, 2 * slot + step % 2);
    }
  }
  EXPECT_EQ(seen.size(), 32u);
}

}  // namespace
}  // namespace gpuprobe
