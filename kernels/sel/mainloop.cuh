// The sel kernels' main loop parts: a warp's load cursor and ring passes (cp.async into its
// shared-memory ring), the decode of a pass's codes to f16 and its tensor-core products with the
// staged inputs, and the compute cursor that says where an item's sums go.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/arch/cp_async.cuh"
#include "kernels/arch/mma.cuh"
#include "kernels/arch/shared_load.cuh"
#include "kernels/nvfp4_pack.h"
#include "kernels/sel/block_work.cuh"
#include "kernels/sel/smem_layout.h"

namespace gpuprobe::sel {

using arch::CopyAsync16;
using arch::CopyAsync4;
using arch::CopyAsync8;
using arch::LoadShared128;
using arch::LoadShared32;
using arch::LoadShared64;
using arch::Mma16816;
using arch::MulHalf2;
using arch::ScalePairHalf2;
using arch::SharedAddress;

// The two e4m3 block scales of one chunk row as f32.
__device__ __forceinline__ float2 ChunkScales(uint32_t pair) {
  const uint32_t h2 = ScalePairHalf2(pair);
  return __half22float2(*reinterpret_cast<const __half2*>(&h2));
}

// Octets per band of the sel layout of the bank a kernel reads, and the quads of a pass its scale
// pairs are grouped by (kernels/nvfp4_pack.h, SelBands): a gate+up tile's gate octet and up
// octet, 2 quads a pass; a down bank's 4 consecutive octets, 1 quad a pass.
template <bool kGateUpSilu>
constexpr int kBandOctets = kGateUpSilu ? kSelGateUpBandOctets : kSelDownBands.octets;
template <bool kGateUpSilu>
constexpr int kPassQuads = kGateUpSilu ? kSelGateUpPassQuads : kSelDownBands.pass_quads;

// Where a lane loads from: its place in the current pass (chunk q of its item's first octet,
// `octet` within its band; the item's octets follow it in each quad): its chunk, and its pairs of
// the pass (TileRows: row g of each of the item's octets). `code` and `pairs` move with q, so that
// a pass is addressed from them with immediate offsets alone.
template <int kOctets, int kBand>
struct LoadCursor {
  static_assert(kBand % kOctets == 0);
  int index;  // item index within the block; at or past the block's items, nothing is loaded
  int q;      // first chunk of the current pass
  int chunk_end;
  const uint4* code;
  const uint16_t* pairs;
  int octet;
};

template <bool kGateUpSilu, Deal kDeal, int kOctets>
__device__ __forceinline__ LoadCursor<kOctets, kBandOctets<kGateUpSilu>> StartLoad(
    const SelParams& p, const BlockTiles& bt, const int* expert_of, int index, int g) {
  constexpr int kBand = kBandOctets<kGateUpSilu>;
  const Item item = MakeItem<kDeal>(p, bt, index);
  int group, out_row, rows[kOctets];
  TileRows<kGateUpSilu, kOctets>(p, item.tile, g, group, out_row, rows);
  const int64_t expert = expert_of[group - bt.first_group];
  const int64_t octet_chunks = 8 * (p.cols / kChunkElements);
  const uint4* codes = reinterpret_cast<const uint4*>(p.codes + expert * p.expert_code_bytes);
  const uint16_t* scales =
      reinterpret_cast<const uint16_t*>(p.scales + expert * p.expert_scale_bytes);
  // gate+up: band rows[0] / 8 holds the tile's gate octet and its up octet; down: the tile's
  // octets are consecutive. Quad q / 4 of the band starts 32 kBand (q / 4) = 8 kBand q places on.
  const int octet = rows[0] / 8;
  const int64_t pass_start =
      (kGateUpSilu ? octet : octet / kBand) * kBand * octet_chunks + 8 * kBand * item.chunk_begin;
  const int lane = static_cast<int>(threadIdx.x % 32);
  LoadCursor<kOctets, kBand> at{index, item.chunk_begin, item.chunk_end};
  at.octet = kGateUpSilu ? 0 : octet % kBand;
  at.code = codes + pass_start + 32 * at.octet + lane;
  at.pairs = scales + pass_start + kPassQuads<kGateUpSilu> * kBand * lane + at.octet;
  return at;
}

// Moves a load cursor to its item's next pass of kChunksPerPass chunks.
template <int kChunksPerPass, int kOctets, int kBand>
__device__ __forceinline__ void NextPass(LoadCursor<kOctets, kBand>& at) {
  at.q += kChunksPerPass;
  at.code += 8 * kBand * kChunksPerPass;
  at.pairs += 8 * kBand * kChunksPerPass;
}

// A lane's places in one stage of its warp's ring (StageBytes), as 32-bit shared addresses: its
// code chunks, [octet][j][lane] 16 bytes each from `code` on, and on IssuePass's short path its
// scale pairs side by side (Pairs). The kernel carries `code` from stage to stage, so that the
// refill and the read of a pass form no address but the pairs'.
template <int kChunks, int kOctets>
struct StageLane {
  static constexpr int kPairs = kChunks * kOctets;  // a lane's scale pairs in a pass
  static constexpr int kCodeBytes = kPairs * 32 * 16;
  uint32_t code;

  __device__ __forceinline__ static StageLane At(uint8_t* stage, int lane) {
    return {SharedAddress(stage) + 16 * lane};
  }
  // The lane's chunk j of octet i.
  __device__ __forceinline__ uint32_t Code(int i, int j) const {
    return code + (i * kChunks + j) * 32 * 16;
  }
  __device__ __forceinline__ uint32_t Pairs(int lane) const {
    return code + kCodeBytes - (16 - 2 * kPairs) * lane;
  }
  // The lane's scale word ([octet][j][lane], 4 bytes each) of chunk j of octet i.
  __device__ __forceinline__ uint32_t ScaleWord(int i, int j, int lane) const {
    return code + kCodeBytes - 12 * lane + (i * kChunks + j) * 32 * 4;
  }
};

// The ring of kStages stages that a lane walks in order, stage kStages - 1 followed by stage 0.
template <int kChunks, int kOctets, int kStages>
struct RingWalk {
  static constexpr int kStageBytes = StageBytes(kChunks, kOctets);
  uint32_t last_code;  // the lane's code place in the last stage

  __device__ __forceinline__ StageLane<kChunks, kOctets> Next(
      const StageLane<kChunks, kOctets>& at) const {
    return {at.code + (at.code == last_code ? -(kStages - 1) * kStageBytes : kStageBytes)};
  }
};

// One pass of one lane: chunks q + 4j + c of its rows (row g of each octet).
template <int kChunks, int kOctets>
struct PassData {
  uint4 code[kOctets][kChunks];
  uint32_t scale[kOctets][kChunks];
};

// Requests one pass into a ring stage: each lane its own code chunks and scale pairs, which only
// it reads back (no warp fence). Chunks past the item's end arrive as zero codes and zero scales,
// so they add nothing.
//
// A pass whose chunks all lie in the item and in full quads (every pass of a row whose length
// is a multiple of 128, but the last of a split that ends mid-pass) takes the short path: lane
// 4g + c's chunk of each quad is entry `lane` of its octet's block, the item's octets' blocks of a
// quad side by side, and the lane's pairs of the pass side by side, so that one pointer and
// immediate offsets address the pass and one 4- or 8-byte copy takes the lane's pairs
// ([lane][j][octet] in the stage). H200, 2026-12-04: one 8-byte copy a lane a pass cost nothing
// where the bytes come from DRAM, where two 4-byte copies cost up to 14% (kernel-decisions.md
// rows 160-161), and no fence made the small unions 2-5% faster than 16-byte copies shared by 16
// lanes.
template <int kChunks, int kOctets, int kBand>
__device__ __forceinline__ void IssuePass(const LoadCursor<kOctets, kBand>& at, int chunks,
                                          int lane, const StageLane<kChunks, kOctets>& to) {
  // The lane's pairs of the pass lie side by side where it reads all of the band's octets or
  // one quad.
  static_assert(kChunks == 1 || kOctets == kBand);
  constexpr int kPairs = StageLane<kChunks, kOctets>::kPairs;
  if (at.q + 4 * kChunks <= at.chunk_end) {
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
#pragma unroll
      for (int i = 0; i < kOctets; ++i) {
        CopyAsync16(to.Code(i, j), at.code + 32 * kBand * j + 32 * i, true);
      }
    }
    if constexpr (kPairs == 4) {
      CopyAsync8(to.Pairs(lane), at.pairs, true);
    } else {
      static_assert(kPairs == 2);
      CopyAsync4(to.Pairs(lane), at.pairs, true);
    }
    return;
  }
  // The band's start, and places as SelChunkIndex and SelScaleIndex give them: lane 4g + c of a
  // full quad, rows closer together in a narrower last one; a pass's quads one group of pairs
  // where all of them are full. Each pair comes in the 4-byte word holding it ([octet][j][lane]
  // in the stage; the band starts a word), and ReadPass takes its half.
  const int g = lane / 4, c = lane % 4;
  const uint4* band_codes = at.code - (8 * kBand * at.q + 32 * at.octet + lane);
  const uint16_t* band_pairs = at.pairs - (8 * kBand * at.q + kChunks * kBand * lane + at.octet);
  const bool full_group = at.q + 4 * kChunks <= chunks;
#pragma unroll
  for (int j = 0; j < kChunks; ++j) {
    const int quad = at.q + 4 * j;
    const bool valid = quad + c < at.chunk_end;
    const int width = min(4, chunks - quad);
    const int in_block = !valid ? 0 : width == 4 ? lane : g * width + c;
#pragma unroll
    for (int i = 0; i < kOctets; ++i) {
      const int octet = at.octet + i;
      CopyAsync16(to.Code(i, j), band_codes + 8 * kBand * quad + octet * 8 * width + in_block,
                  valid);
      const int pair = full_group ? 8 * kBand * at.q + (in_block * kChunks + j) * kBand + octet
                                  : 8 * kBand * quad + in_block * kBand + octet;
      CopyAsync4(to.ScaleWord(i, j, lane), band_pairs + (pair & ~1), valid);
    }
  }
}

// Reads one lane's pass back from its ring stage. kFull: every chunk of the pass lies in the
// item and in a full quad (IssuePass's short path), so the lane's pairs are side by side.
template <int kChunks, int kOctets, bool kFull>
__device__ __forceinline__ PassData<kChunks, kOctets> ReadPass(
    const StageLane<kChunks, kOctets>& from, int lane) {
  constexpr int kPairs = StageLane<kChunks, kOctets>::kPairs;
  PassData<kChunks, kOctets> data;
#pragma unroll
  for (int j = 0; j < kChunks; ++j) {
#pragma unroll
    for (int i = 0; i < kOctets; ++i) data.code[i][j] = LoadShared128(from.Code(i, j));
  }
  if constexpr (kFull) {
    // The lane's pairs of the pass ([j][octet]), two to a word, in one load (ComputePass reads
    // a pair's low 16 bits).
    uint32_t words[kPairs / 2];
    if constexpr (kPairs == 4) {
      const uint2 both = LoadShared64(from.Pairs(lane));
      words[0] = both.x;
      words[1] = both.y;
    } else {
      words[0] = LoadShared32(from.Pairs(lane));
    }
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
#pragma unroll
      for (int i = 0; i < kOctets; ++i) {
        const int n = j * kOctets + i;
        data.scale[i][j] = words[n / 2] >> (16 * (n % 2));
      }
    }
  } else {
    // The copied words: a lane's pair is the half of its word its octet's parity names (bands
    // have an even number of octets, and an item's first octet is even).
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
#pragma unroll
      for (int i = 0; i < kOctets; ++i) {
        data.scale[i][j] = LoadShared32(from.ScaleWord(i, j, lane)) >> (16 * (i & 1));
      }
    }
  }
  return data;
}

// Where chunk q of a staged row starts, in 16-byte vectors (StagedLayout).
template <bool kOneSlot>
__device__ __forceinline__ int StagedChunkOffset(int q) {
  return kOneSlot ? OneSlotChunkOffset(q) : GroupChunkOffset(q);
}

// Multiplies one pass's chunks with the staged inputs and adds them into acc. Tensor-core f32
// accumulation truncates, so every chain into one accumulator is short (one 16-element block
// per-slot, one chunk otherwise) and chains are summed with ordinary f32 adds (H200, 2026-11-30:
// one chain per row left gate+up 1.07e-5 off in norm at K = 2560; short chains 2.7e-7).
//
// kOneSlot: B columns 2c and 2c + 1 hold the hi and lo parts of the input at the K positions
// of column thread c and are zero elsewhere, so column c's two D values are the hi and lo sums
// of c's own elements; the block scale is applied to them in f32 (acc[i]: row g of octet i,
// summed across the four column threads at the end). Each pair of octets is one mma tile; the
// tiles share each B read. `b` points at chunk q0 + c of this lane's hi row, lo row or the zero
// row.
// Otherwise: B column n is slot n of the group, and one mma's K mixes the chunks (and block
// scales) of all four column threads, so the weights are scaled before the mma: code * 2^-14 *
// e4m3 scale is exact in f16 (the smallest product, 0.5 * 2^-9 * 2^-14, is f16's 2^-24).
// acc[0..3] are D's rows g, g + 8 x columns 2c, 2c + 1, hi and lo in separate chains.
template <bool kOneSlot, int kChunks, int kOctets, bool kFull>
__device__ __forceinline__ void ComputePass(const PassData<kChunks, kOctets>& data, const uint4* b,
                                            int q0, int chunk_end, int c, float (&acc)[4]) {
  static_assert(kOctets % 2 == 0 && kOctets <= 4 && (kOneSlot || kOctets == 2));
  constexpr int kTiles = kOctets / 2;
#pragma unroll
  for (int j = 0; j < kChunks; ++j) {
    // Past the item's end (codes and scales zero) any staged chunk will do: the item's last.
    const int q = kFull ? q0 + 4 * j + c : min(q0 + 4 * j + c, chunk_end - 1);
    const uint4* chunk_b = b + StagedChunkOffset<kOneSlot>(q - q0 - c);  // b: chunk q0 + c
    uint32_t words[kOctets][4];
#pragma unroll
    for (int i = 0; i < kOctets; ++i) {
      words[i][0] = data.code[i][j].x;
      words[i][1] = data.code[i][j].y;
      words[i][2] = data.code[i][j].z;
      words[i][3] = data.code[i][j].w;
    }
    if (kOneSlot) {
      float2 scales[kOctets];
#pragma unroll
      for (int i = 0; i < kOctets; ++i) scales[i] = ChunkScales(data.scale[i][j]);
#pragma unroll
      for (int block = 0; block < 2; ++block) {
        float d[kTiles][4] = {};
#pragma unroll
        for (int w = 2 * block; w < 2 * block + 2; ++w) {
          uint4 bv;
#pragma unroll
          for (int t = 0; t < kTiles; ++t) {
            uint32_t ag[4], ag8[4];
            DecodeSelWord(words[2 * t][w], ag);
            DecodeSelWord(words[2 * t + 1][w], ag8);
            if (t == 0) bv = chunk_b[w];
            Mma16816(d[t], ag[0], ag8[0], ag[1], ag8[1], bv.x, bv.y);
            Mma16816(d[t], ag[2], ag8[2], ag[3], ag8[3], bv.z, bv.w);
          }
        }
#pragma unroll
        for (int t = 0; t < kTiles; ++t) {
          acc[2 * t] =
              fmaf(d[t][0] + d[t][1], block == 0 ? scales[2 * t].x : scales[2 * t].y, acc[2 * t]);
          acc[2 * t + 1] =
              fmaf(d[t][2] + d[t][3], block == 0 ? scales[2 * t + 1].x : scales[2 * t + 1].y,
                   acc[2 * t + 1]);
        }
      }
    } else {
      const uint32_t(&words_g)[4] = words[0];
      const uint32_t(&words_g8)[4] = words[1];
      const uint32_t scales_g = ScalePairHalf2(data.scale[0][j]);
      const uint32_t scales_g8 = ScalePairHalf2(data.scale[1][j]);
      float hi[4] = {0.0f, 0.0f, 0.0f, 0.0f}, lo[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        // Words 0-1 are block 0, words 2-3 block 1: broadcast that scale to both halves.
        const uint32_t sg = __byte_perm(scales_g, 0, w < 2 ? 0x1010 : 0x3232);
        const uint32_t sg8 = __byte_perm(scales_g8, 0, w < 2 ? 0x1010 : 0x3232);
        uint32_t ag[4], ag8[4];
        DecodeSelWord(words_g[w], ag);
        DecodeSelWord(words_g8[w], ag8);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          ag[i] = MulHalf2(ag[i], sg);
          ag8[i] = MulHalf2(ag8[i], sg8);
        }
        const uint4 even = chunk_b[2 * w];
        const uint4 odd = chunk_b[2 * w + 1];
        Mma16816(hi, ag[0], ag8[0], ag[1], ag8[1], even.x, even.y);
        Mma16816(lo, ag[0], ag8[0], ag[1], ag8[1], even.z, even.w);
        Mma16816(hi, ag[2], ag8[2], ag[3], ag8[3], odd.x, odd.y);
        Mma16816(lo, ag[2], ag8[2], ag[3], ag8[3], odd.z, odd.w);
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) acc[k] += hi[k] + lo[k];
    }
  }
}

// Where a lane computes: its item, pass and staged B row (`b`: at chunk q + c, the lane's first
// of the pass; it moves with q).
struct ComputeCursor {
  int index;
  int q;
  int chunk_end;
  const uint4* b;
  // Where the item's sums go, found at its start (below), each with the factor it takes there:
  // its staged row's out_scale x the group's global scale, as WriteTile forms it. Per-slot
  // (kOutputAtItemStart): row g at out (row g + 8i of octet i is 8i floats on), written by the
  // lanes of column 0. Group plans (kGroupOutputAtItemStart): columns 2c and 2c + 1 of lane (g, c),
  // and whether each is stored.
  float* out;
  float out_factor;
  float* group_out[2];
  float group_factor[2];
  bool group_store[2];
};

// The consecutive downs find their tiles' output places and factors when an item starts, while
// its first pass is in flight, so that the item's end only multiplies and stores: 0.05-0.15 us off
// the per-slot down, 0.09 off the union-10 down (H200, 2026-12-01). Gate+up has no registers to
// spare for it. The two forms are kept apart: one shared form compiled the per-slot down 0.7 us
// slower.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
constexpr bool kOutputAtItemStart = !kGateUpSilu && kOneSlot && kDeal == Deal::kConsecutive;
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
constexpr bool kGroupOutputAtItemStart = !kGateUpSilu && !kOneSlot && kDeal == Deal::kConsecutive;

template <bool kGateUpSilu, bool kOneSlot, Deal kDeal, int kOctets>
__device__ __forceinline__ ComputeCursor StartCompute(const SelParams& p, const BlockTiles& bt,
                                                      const BlockGroups& bg, int index,
                                                      const uint4* staged, const uint4* zero,
                                                      const float* out_scale, int g, int c) {
  const Item item = MakeItem<kDeal>(p, bt, index);
  int group, out_row, rows[kOctets];
  TileRows<kGateUpSilu, kOctets>(p, item.tile, g, group, out_row, rows);
  const StagedLayout layout = MakeStagedLayout(kOneSlot, MyK<kDeal>(p).chunks);
  const uint4* b;
  if (kOneSlot) {
    const int staged_row = StagedRow<kDeal>(p, bt, bg, group, 0);
    const uint4* row = staged + staged_row * layout.row_vectors;
    const uint4* own = g == 2 * c ? row : g == 2 * c + 1 ? row + layout.lo_offset : zero;
    b = own + OneSlotChunkOffset(item.chunk_begin + c);
    if constexpr (kOutputAtItemStart<kGateUpSilu, kOneSlot, kDeal>) {
      const int local = group - bt.first_group;
      const int slot = bg.slot[local * p.staged_cols];
      return {index,
              item.chunk_begin,
              item.chunk_end,
              b,
              p.out + int64_t{slot} * p.out_rows + out_row,
              out_scale[staged_row] * bg.global_a[local]};
    }
  } else {
    // Columns past the group's width read slot 0's row; they are computed and never written.
    const bool in_group =
        g < p.staged_cols && bg.slot[(group - bt.first_group) * p.staged_cols + g] >= 0;
    b = staged + StagedRow<kDeal>(p, bt, bg, group, in_group ? g : 0) * layout.row_vectors;
    // kClusterKHalves: the staged rows start at the block's first chunk (the item's).
    b += GroupChunkOffset((kDeal == Deal::kClusterKHalves ? 0 : item.chunk_begin) + c);
    if constexpr (kGroupOutputAtItemStart<kGateUpSilu, kOneSlot, kDeal>) {
      // WriteTile's lookups, both columns side by side; a column past the group's width takes
      // column 0's place and is not stored.
      ComputeCursor at{index, item.chunk_begin, item.chunk_end, b, nullptr, 0.0f};
      const int local = group - bt.first_group;
#pragma unroll
      for (int parity = 0; parity < 2; ++parity) {
        const int n = 2 * c + parity;
        const bool store = n < p.staged_cols && bg.slot[local * p.staged_cols + n] >= 0;
        const int column = store ? n : 0;
        const int slot = bg.slot[local * p.staged_cols + column];
        const int row = StagedRow<kDeal>(p, bt, bg, group, column);
        at.group_out[parity] = p.out + int64_t{slot} * p.out_rows + out_row;
        at.group_factor[parity] = out_scale[row] * bg.global_a[local];
        at.group_store[parity] = store;
      }
      return at;
    }
  }
  return {index, item.chunk_begin, item.chunk_end, b, nullptr, 0.0f};
}

}  // namespace gpuprobe::sel
