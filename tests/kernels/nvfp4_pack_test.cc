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

// Where row `row` of a bank of `rows` rows lies: in band `band`, as octet `octet` of it.
struct BandOfRow {
  int band, octet;
};

BandOfRow ExpectedBand(bool gate_up, int rows, int row) {
  if (gate_up) return {row % (rows / 2) / 8, row / (rows / 2)};  // gate octet b, then up octet b
  return {row / 32, row / 8 % 4};
}

SelBands BandsOf(bool gate_up, int rows) { return gate_up ? SelGateUpBands(rows) : kSelDownBands; }

TEST(Nvfp4PackTest, ChunkAndScalePlacesArePermutationsWithinEachBand) {
  for (bool gate_up : {true, false}) {
    const int rows = 96;  // gate+up: 6 bands of a gate and an up octet; down: 3 of 4 octets
    const SelBands bands = BandsOf(gate_up, rows);
    for (int chunks : {1, 2, 3, 4, 5, 8, 17, 18, 20, 30, 80}) {
      const int band_places = 8 * bands.octets * chunks;
      std::vector<int> codes_seen(rows * chunks, 0), scales_seen(rows * chunks, 0);
      for (int row = 0; row < rows; ++row) {
        const int64_t first = int64_t{ExpectedBand(gate_up, rows, row).band} * band_places;
        for (int q = 0; q < chunks; ++q) {
          for (const int64_t at :
               {SelChunkIndex(row, q, chunks, bands), SelScaleIndex(row, q, chunks, bands)}) {
            ASSERT_GE(at, first) << "gate_up " << gate_up << " chunks " << chunks << " row " << row;
            ASSERT_LT(at, first + band_places)
                << "gate_up " << gate_up << " chunks " << chunks << " row " << row;
          }
          ++codes_seen[SelChunkIndex(row, q, chunks, bands)];
          ++scales_seen[SelScaleIndex(row, q, chunks, bands)];
        }
      }
      for (int i = 0; i < rows * chunks; ++i) {
        ASSERT_EQ(codes_seen[i], 1) << "gate_up " << gate_up << " chunks " << chunks << " " << i;
        ASSERT_EQ(scales_seen[i], 1) << "gate_up " << gate_up << " chunks " << chunks << " " << i;
      }
    }
  }
}

TEST(Nvfp4PackTest, APassOverABandsOctetsIsOneRunOf512ByteBlocks) {
  // Lane 4g + c reads row g's chunk 4u + c of a full quad: octet o of the band at
  // 32 x octets x u + 32o + lane from the band's start.
  for (bool gate_up : {true, false}) {
    const int rows = 2560;
    const SelBands bands = BandsOf(gate_up, rows);
    for (int row = 0; row < rows; row += 8) {
      const BandOfRow at = ExpectedBand(gate_up, rows, row);
      for (int u = 0; u < 20; ++u) {
        for (int lane = 0; lane < 32; ++lane) {
          ASSERT_EQ(SelChunkIndex(row + lane / 4, 4 * u + lane % 4, 80, bands),
                    int64_t{at.band} * 8 * bands.octets * 80 + 32 * bands.octets * u +
                        32 * at.octet + lane)
              << "gate_up " << gate_up << " row " << row << " quad " << u << " lane " << lane;
        }
      }
    }
  }
}

// Full quads: lane 4g + c's pairs of a pass (its pass_quads quads, the band's octets) lie side
// by side from octets x (32 x first quad + pass_quads x lane); a last group with a narrower quad
// or fewer quads goes quad by quad.
TEST(Nvfp4PackTest, ALanesScalePairsOfAPassLieSideBySide) {
  for (bool gate_up : {true, false}) {
    const int rows = 64;
    const SelBands bands = BandsOf(gate_up, rows);
    const int quads_a_pass = gate_up ? 2 : 1;
    for (int row = 0; row < rows; row += 8) {
      const BandOfRow at = ExpectedBand(gate_up, rows, row);
      const int64_t band_start = int64_t{at.band} * 8 * bands.octets * 20;
      for (int u = 0; u < 4; ++u) {  // chunks 20: quads 0-3 in full groups either way
        const int first = u - u % quads_a_pass;
        for (int lane = 0; lane < 32; ++lane) {
          EXPECT_EQ(SelScaleIndex(row + lane / 4, 4 * u + lane % 4, 20, bands),
                    band_start + 32 * bands.octets * first +
                        (quads_a_pass * lane + u - first) * bands.octets + at.octet)
              << "gate_up " << gate_up << " row " << row << " quad " << u << " lane " << lane;
        }
      }
      for (int lane = 0; lane < 32; ++lane) {  // quad 4: a group of its own
        EXPECT_EQ(SelScaleIndex(row + lane / 4, 16 + lane % 4, 20, bands),
                  band_start + 32 * bands.octets * 4 + bands.octets * lane + at.octet);
      }
    }
  }
  // A narrower last quad (chunks 30: quad 7 has width 2): gate+up's group of quads 6 and 7 goes
  // quad by quad, lane place g x width + c.
  const SelBands gate_up = SelGateUpBands(16);
  for (int g = 0; g < 8; ++g) {
    for (int c = 0; c < 4; ++c) {
      EXPECT_EQ(SelScaleIndex(8 + g, 24 + c, 30, gate_up), 2 * 32 * 6 + 2 * (4 * g + c) + 1);
      if (c < 2) {
        EXPECT_EQ(SelScaleIndex(g, 28 + c, 30, gate_up), 2 * 32 * 7 + 2 * (2 * g + c));
        EXPECT_EQ(SelChunkIndex(8 + g, 28 + c, 30, gate_up), 2 * 32 * 7 + 16 + 2 * g + c);
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
