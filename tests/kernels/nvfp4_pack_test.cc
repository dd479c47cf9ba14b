#include "kernels/nvfp4_pack.h"

#include <cmath>
#include <set>
#include <vector>

#include "common/seeded_rng.h"
#include "gtest/gtest.h"
#include "kernels/nvfp4.h"

namespace gpuprobe {
namespace {

// IEEE binary16 bits to their value (normals and subnormals; no inf or NaN can arise here).
double HalfValue(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  EXPECT_NE(exponent, 0x1F) << "decoded an f16 inf or NaN: " << bits;
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  return (bits & 0x8000) ? -magnitude : magnitude;
}

// Element e of a sel-layout word, decoded as the kernels do, times 2^14.
double DecodedElement(uint32_t sel_word, int element) {
  uint32_t pairs[4];
  DecodeSelWord(sel_word, pairs);
  const uint32_t pair = pairs[element / 2];
  const uint16_t half = static_cast<uint16_t>(element % 2 == 0 ? pair : pair >> 16);
  return HalfValue(half) * kSelDecodeScale;
}

TEST(Nvfp4PackTest, EveryCodeInEveryPositionDecodesToItsValue) {
  for (uint32_t code = 0; code < 16; ++code) {
    for (int position = 0; position < 8; ++position) {
      const uint32_t word = code << (4 * position);
      const uint32_t sel = ToSelLayout(word);
      for (int element = 0; element < 8; ++element) {
        const double want = element == position ? E2m1Value(static_cast<uint8_t>(code)) : 0.0;
        EXPECT_EQ(DecodedElement(sel, element), want)
            << "code " << code << " at position " << position << ", element " << element;
      }
      // The sign survives: code 8 is -0, whose f16 is 0x8000, not 0.
      EXPECT_EQ(std::signbit(DecodedElement(sel, position)), code >= 8) << "code " << code;
      EXPECT_EQ(ToCheckpointLayout(sel), word) << "code " << code << " position " << position;
    }
  }
}

TEST(Nvfp4PackTest, TheLayoutIsAPermutationOfTheWordsBits) {
  std::set<int> seen;
  for (int element = 0; element < 8; ++element) {
    for (int bit = 0; bit < 4; ++bit) {
      const int at = SelLayoutBit(element, bit);
      EXPECT_GE(at, 0);
      EXPECT_LT(at, 32);
      EXPECT_TRUE(seen.insert(at).second) << "bit " << at << " used twice";
    }
  }
  EXPECT_EQ(seen.size(), 32u);
  for (int bit = 0; bit < 32; ++bit) {
    EXPECT_EQ(ToCheckpointLayout(ToSelLayout(1u << bit)), 1u << bit);
    EXPECT_EQ(ToSelLayout(ToCheckpointLayout(1u << bit)), 1u << bit);
  }
}

TEST(Nvfp4PackTest, RandomWordsRoundTripAndDecodeElementByElement) {
  SeededRng rng(17);
  for (int trial = 0; trial < 20000; ++trial) {
    const uint32_t word = static_cast<uint32_t>(rng.Next());
    const uint32_t sel = ToSelLayout(word);
    ASSERT_EQ(ToCheckpointLayout(sel), word) << std::hex << word;
    ASSERT_EQ(__builtin_popcount(sel), __builtin_popcount(word)) << std::hex << word;
    for (int e = 0; e < 8; ++e) {
      ASSERT_EQ(DecodedElement(sel, e), E2m1Value(static_cast<uint8_t>(word >> (4 * e))))
          << std::hex << word << " element " << e;
    }
  }
}

TEST(Nvfp4PackTest, ChunkAndScalePlacesArePermutationsWithinEachBandOfRows) {
  for (int band : {kSelGateUpBandOctets, kSelDownBandOctets}) {
    for (int chunks : {1, 2, 3, 4, 5, 17, 20, 80}) {
      const int rows = 3 * 8 * band;
      const int band_places = 8 * band * chunks;
      std::vector<int> codes_seen(rows * chunks, 0), scales_seen(rows * chunks, 0);
      for (int row = 0; row < rows; ++row) {
        for (int q = 0; q < chunks; ++q) {
          const int64_t first = row / (8 * band) * band_places;
          for (const int64_t at :
               {SelChunkIndex(row, q, chunks, band), SelScaleIndex(row, q, chunks, band)}) {
            ASSERT_GE(at, first) << "band " << band << " chunks " << chunks << " row " << row;
            ASSERT_LT(at, first + band_places)
                << "band " << band << " chunks " << chunks << " row " << row;
          }
          ++codes_seen[SelChunkIndex(row, q, chunks, band)];
          ++scales_seen[SelScaleIndex(row, q, chunks, band)];
        }
      }
      for (int i = 0; i < rows * chunks; ++i) {
        ASSERT_EQ(codes_seen[i], 1) << "band " << band << " chunks " << chunks << " place " << i;
        ASSERT_EQ(scales_seen[i], 1) << "band " << band << " chunks " << chunks << " place " << i;
      }
    }
  }
}

TEST(Nvfp4PackTest, AWarpsLoadOfOneQuadOfAnOctetIs512ContiguousBytes) {
  // Lane 4g + c reads row g's chunk 4u + c of a full quad: place 32u + lane in a one-octet band,
  // and octet o of a band of 4 at 128u + 32o + lane, so a pass over the band's octets is one run.
  for (int u = 0; u < 20; ++u) {
    for (int lane = 0; lane < 32; ++lane) {
      EXPECT_EQ(SelChunkIndex(8 + lane / 4, 4 * u + lane % 4, 80, 1), 8 * 80 + 32 * u + lane);
      for (int o = 0; o < 4; ++o) {
        EXPECT_EQ(SelChunkIndex(32 + 8 * o + lane / 4, 4 * u + lane % 4, 80, 4),
                  32 * 80 + 128 * u + 32 * o + lane);
      }
    }
  }
}

TEST(Nvfp4PackTest, ALanesScalePairsOfABandsQuadLieSideBySide) {
  // Full quads: lane 4g + c's pairs of the band's octets are the `band` pairs from
  // band x (32u + lane), octet by octet; in a one-octet band, the codes' places.
  for (int u = 0; u < 5; ++u) {
    for (int lane = 0; lane < 32; ++lane) {
      EXPECT_EQ(SelScaleIndex(8 + lane / 4, 4 * u + lane % 4, 20, 1), 8 * 20 + 32 * u + lane);
      for (int o = 0; o < 4; ++o) {
        EXPECT_EQ(SelScaleIndex(32 + 8 * o + lane / 4, 4 * u + lane % 4, 20, 4),
                  32 * 20 + 4 * (32 * u + lane) + o);
      }
    }
  }
  // A narrower last quad (chunks 18: width 2): lane g x 2 + c's place, its pairs side by side.
  for (int g = 0; g < 8; ++g) {
    for (int c = 0; c < 2; ++c) {
      for (int o = 0; o < 4; ++o) {
        EXPECT_EQ(SelScaleIndex(8 * o + g, 16 + c, 18, 4), 128 * 4 + 4 * (2 * g + c) + o);
        EXPECT_EQ(SelChunkIndex(8 * o + g, 16 + c, 18, 4), 128 * 4 + 16 * o + 2 * g + c);
      }
    }
  }
}

TEST(Nvfp4PackTest, ReverseBitsMatchesABitByBitReversal) {
  SeededRng rng(5);
  for (int trial = 0; trial < 1000; ++trial) {
    const uint32_t w = static_cast<uint32_t>(rng.Next());
    uint32_t want = 0;
    for (int b = 0; b < 32; ++b) want |= ((w >> b) & 1u) << (31 - b);
    ASSERT_EQ(ReverseBits(w), want) << std::hex << w;
  }
}

}  // namespace
}  // namespace gpuprobe
