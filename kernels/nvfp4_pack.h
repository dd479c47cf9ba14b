// gpuprobe's device-side layout of NVFP4 codes for the sel kernels ("sel layout"), shared by the
// CUDA kernels, the repack kernel that writes it and their host-side tests.
//
// Hopper has no fp4 conversion instruction, so the kernels decode in software. An e2m1 code
// placed in an f16 with its sign at bit 15 and its three magnitude bits (e1 e0 m) at bits
// 11..9 is exactly code_value * 2^-14, subnormals included. The sel layout permutes the 32 bits
// of every 32-bit code word (8 elements, element e in bits 4e..4e+3 of the checkpoint's
// little-endian word) once, when the banks are loaded, so that four masks give the word's four
// f16 pairs, about 0.875 instructions per weight:
//
//   pair 0 = w & kSelHalfMask               elements 0, 1 (low half, high half)
//   pair 1 = (w << 8) & kSelHalfMask        elements 2, 3
//   pair 2 = brev(w) & kSelHalfMask         elements 4, 5
//   pair 3 = (brev(w) << 8) & kSelHalfMask  elements 6, 7
//
// The 16-byte chunks (32 elements of a row) move too, within their expert: rows are taken in
// octets (8 consecutive rows: the 8 lane groups of an mma tile), chunks in quads (the 4 column
// threads), and each octet x quad is one contiguous 512-byte block, row-major, so that one
// 16-byte load per lane of a warp reads 512 contiguous bytes. Octets go in bands (SelBands: a
// gate+up tile's gate octet and up octet, a down bank's 4 consecutive octets): within a band,
// quad u's blocks of its octets lie side by side, so that a warp's pass over a tile's octets
// reads one contiguous run, addressed from one pointer. Scales (2 bytes per row and chunk) take
// the codes' places, except that a lane's pairs of a kernel's pass (the band's octets of the
// pass's quads) lie side by side (SelScaleIndex), so that each lane copies its pass's pairs at
// once and reads back only its own. Every expert keeps its byte count and its place, so the sel
// kernels read exactly the checkpoint's bytes per expert.
//
//   uint32_t sel_word = ToSelLayout(checkpoint_word);   // ToCheckpointLayout undoes it
//   const SelBands bands = SelGateUpBands(rows);          // or kSelDownBands
//   int64_t at = SelChunkIndex(row, chunk, chunks_per_row, bands);       // chunk (row, chunk)
//   int64_t pair_at = SelScaleIndex(row, chunk, chunks_per_row, bands);  // and its scale pair
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GPUPROBE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define GPUPROBE_HOST_DEVICE inline
#endif

namespace gpuprobe {

// Sign bits 15 and 31, magnitude bits 11..9 and 27..25 of an f16 pair.
inline constexpr uint32_t kSelHalfMask = 0x8E008E00u;
// A decoded code is worth 2^-14 of its e2m1 value.
inline constexpr float kSelDecodeScale = 16384.0f;

GPUPROBE_HOST_DEVICE uint32_t ReverseBits(uint32_t w) {
#if defined(__CUDA_ARCH__)
  return __brev(w);
#else
  w = ((w >> 1) & 0x55555555u) | ((w & 0x55555555u) << 1);
  w = ((w >> 2) & 0x33333333u) | ((w & 0x33333333u) << 2);
  w = ((w >> 4) & 0x0F0F0F0Fu) | ((w & 0x0F0F0F0Fu) << 4);
  w = ((w >> 8) & 0x00FF00FFu) | ((w & 0x00FF00FFu) << 8);
  return (w >> 16) | (w << 16);
#endif
}

// The four f16 pairs of a sel-layout word: pairs[i] holds elements 2i (low half) and 2i + 1.
GPUPROBE_HOST_DEVICE void DecodeSelWord(uint32_t w, uint32_t (&pairs)[4]) {
  const uint32_t reversed = ReverseBits(w);
  pairs[0] = w & kSelHalfMask;
  pairs[1] = (w << 8) & kSelHalfMask;
  pairs[2] = reversed & kSelHalfMask;
  pairs[3] = (reversed << 8) & kSelHalfMask;
}

// Where bit `bit` (0 = m, 1 = e0, 2 = e1, 3 = sign) of element `element` sits in a sel-layout
// word. Its place in the decoded pair: bit 15 for the sign, 9 + bit for the magnitude, plus 16
// for odd elements; pair i takes that place from bit t (pair 0), t - 8 (pair 1), 31 - t
// (pair 2, reversed) or 39 - t (pair 3, reversed and shifted).
GPUPROBE_HOST_DEVICE int SelLayoutBit(int element, int bit) {
  const int t = 16 * (element % 2) + (bit == 3 ? 15 : 9 + bit);
  switch (element / 2) {
    case 0:
      return t;
    case 1:
      return t - 8;
    case 2:
      return 31 - t;
    default:
      return 39 - t;
  }
}

GPUPROBE_HOST_DEVICE uint32_t ToSelLayout(uint32_t checkpoint_word) {
  uint32_t out = 0;
  for (int element = 0; element < 8; ++element) {
    for (int bit = 0; bit < 4; ++bit) {
      out |= ((checkpoint_word >> (4 * element + bit)) & 1u) << SelLayoutBit(element, bit);
    }
  }
  return out;
}

GPUPROBE_HOST_DEVICE uint32_t ToCheckpointLayout(uint32_t sel_word) {
  uint32_t out = 0;
  for (int element = 0; element < 8; ++element) {
    for (int bit = 0; bit < 4; ++bit) {
      out |= ((sel_word >> SelLayoutBit(element, bit)) & 1u) << (4 * element + bit);
    }
  }
  return out;
}

// How a bank's octets form bands of `octets`, and how many quads a kernel's pass over them reads.
// A gate+up bank (gate rows, then up rows; half_rows of each) takes octet b of each half into
// band b, so that a gate+up tile's gate octet and up octet lie side by side, and its kernels'
// passes read 2 quads; a down bank (half_rows 0) takes 4 consecutive octets (32 rows: its rows
// are a multiple of 32, LaunchSelDown), the two mma tiles of a per-slot down's wide item, and
// its passes read 1 quad.
struct SelBands {
  int octets;
  int64_t half_rows;
  int pass_quads;
};

inline constexpr int kSelGateUpBandOctets = 2;
inline constexpr int kSelGateUpPassQuads = 2;
GPUPROBE_HOST_DEVICE SelBands SelGateUpBands(int64_t rows) {
  return {kSelGateUpBandOctets, rows / 2, kSelGateUpPassQuads};
}
inline constexpr SelBands kSelDownBands{4, 0, 1};

// Where chunk `chunk` of row `row` lies in the sel layout, relative to its band's quad u: the
// quad's blocks start at 32 x octets x u; octet o of the band takes 8 x width places from
// 8 x width x o, row r % 8's chunk 4u + c at r % 8 x width + c within them; width is 4 except for
// a last, narrower quad.
struct SelPlace {
  int64_t band_start;  // in chunks (or pairs) from the start of the expert's matrix
  int quad;
  int octet;     // within the band
  int in_block;  // (row % 8) x width + chunk % 4
  int width;
};

GPUPROBE_HOST_DEVICE SelPlace SelPlaceOf(int64_t row, int chunk, int chunks_per_row,
                                         SelBands bands) {
  const int quad = chunk / 4;
  const int width = chunks_per_row - 4 * quad < 4 ? chunks_per_row - 4 * quad : 4;
  const int64_t band = bands.half_rows > 0 ? row % bands.half_rows / 8 : row / (8 * bands.octets);
  const int octet =
      static_cast<int>(bands.half_rows > 0 ? row / bands.half_rows : row / 8 % bands.octets);
  return {band * 8 * bands.octets * chunks_per_row, quad, octet,
          static_cast<int>(row % 8) * width + chunk % 4, width};
}

// The place, in 16-byte chunks from the start of the expert's matrix, of chunk `chunk` of row
// `row`: its octet's block of the quad, row-major.
GPUPROBE_HOST_DEVICE int64_t SelChunkIndex(int64_t row, int chunk, int chunks_per_row,
                                           SelBands bands) {
  const SelPlace at = SelPlaceOf(row, chunk, chunks_per_row, bands);
  return at.band_start + 32 * bands.octets * at.quad + at.octet * 8 * at.width + at.in_block;
}

// The place, in 2-byte pairs from the start of the expert's scales, of the scale pair of chunk
// `chunk` of row `row`. Quads go in groups of pass_quads, as a pass reads them; in a group of full
// quads, lane place p's pairs of the group's quads and the band's octets lie side by side
// ([p][quad][octet]); in a last group that holds a narrower quad or fewer quads, quad by quad
// ([quad][p][octet]).
GPUPROBE_HOST_DEVICE int64_t SelScaleIndex(int64_t row, int chunk, int chunks_per_row,
                                           SelBands bands) {
  const SelPlace at = SelPlaceOf(row, chunk, chunks_per_row, bands);
  const int first_quad = at.quad - at.quad % bands.pass_quads;
  const bool full_group = 4 * (first_quad + bands.pass_quads) <= chunks_per_row;
  if (full_group) {
    return at.band_start + 32 * bands.octets * first_quad +
           (at.in_block * bands.pass_quads + at.quad - first_quad) * bands.octets + at.octet;
  }
  return at.band_start + 32 * bands.octets * at.quad + at.in_block * bands.octets + at.octet;
}

}  // namespace gpuprobe
