// The end of a tile: its sums scaled by the staged row's out_scale and the expert's global
// scale (gate+up: SiLU(gate) x up) and stored, after the column threads' partial sums meet.
#pragma once

#include <cstdint>

#include "kernels/sel/block_work.cuh"

namespace gpuprobe::sel {

// Writes one tile's results. kOneSlot: every lane holds the sums of all K (after the column
// reduction) for row g of each octet (acc[i]: row g + 8i); lanes of column 0 write. Otherwise lane
// (g, c) holds rows g, g + 8 x columns 2c, 2c + 1. kClusterKHalves (group plans only): acc holds K
// half 0, and peer_acc and peer_scale the lane's sums of K half 1 and that block's out_scale.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal, int kOctets>
__device__ __forceinline__ void WriteTile(const SelParams& p, const BlockTiles& bt,
                                          const BlockGroups& bg, int tile, const float* out_scale,
                                          const float (&acc)[4], int g, int c,
                                          const float* peer_acc = nullptr,
                                          const float* peer_scale = nullptr) {
  static_assert(kDeal != Deal::kClusterKHalves || !kOneSlot);
  int group, out_row, rows[kOctets];
  TileRows<kGateUpSilu, kOctets>(p, tile, g, group, out_row, rows);
  const int local = group - bt.first_group;
#pragma unroll
  for (int parity = 0; parity < 2; ++parity) {
    if (kOneSlot && (c != 0 || parity != 0)) continue;
    // Group plans compute both columns with no branch between them, so that their lookups and
    // math overlap; a column past the group's width computes column 0's and is not stored.
    const int n = kOneSlot ? 0 : 2 * c + parity;
    const bool store = kOneSlot || (n < p.staged_cols && bg.slot[local * p.staged_cols + n] >= 0);
    const int column = store ? n : 0;
    float v_g = kOneSlot ? acc[0] : acc[parity];
    float v_g8 = kOneSlot ? acc[1] : acc[2 + parity];
    const int slot = bg.slot[local * p.staged_cols + column];
    const int row = StagedRow<kDeal>(p, bt, bg, group, column);
    float scale = out_scale[row];
    if constexpr (kDeal == Deal::kClusterKHalves) {  // K half 1's sums, in their own input scale
      v_g = v_g * scale + peer_acc[parity] * peer_scale[row];
      v_g8 = v_g8 * scale + peer_acc[2 + parity] * peer_scale[row];
      scale = 1.0f;
    }
    float* out = p.out + int64_t{slot} * p.out_rows + out_row;
    if (kGateUpSilu) {
      const float gate = v_g * scale * bg.global_a[local];
      const float up = v_g8 * scale * bg.global_b[local];
      // The cluster K halves compute their SiLU on the launch's last chain, after the exchange:
      // there by __expf and __fdividef (2 + 1.2 |gate| and 2 ulp, far inside the checks' 1e-3
      // and 1e-5), 0.2-0.3 us faster than the IEEE forms; inside the other kernels' loops the
      // fast forms were slower (H200, 2026-12-01).
      const float value = kDeal == Deal::kClusterKHalves
                              ? __fdividef(gate, 1.0f + __expf(-gate)) * up
                              : gate / (1.0f + expf(-gate)) * up;
      if (store) out[0] = value;
    } else {
      const float global = scale * bg.global_a[local];
      if (store) {
        if constexpr (kOneSlot) {
#pragma unroll
          for (int i = 0; i < kOctets; ++i) out[8 * i] = acc[i] * global;
        } else {
          out[0] = v_g * global;
          out[8] = v_g8 * global;
        }
      }
    }
  }
}

// Per-slot: the four column threads of a lane group hold partial sums over their own chunks, of
// row g of each of kOctets octets.
template <int kOctets>
__device__ __forceinline__ void SumColumnThreads(float (&acc)[4]) {
#pragma unroll
  for (int k = 0; k < kOctets; ++k) {
    acc[k] += __shfl_xor_sync(0xFFFFFFFFu, acc[k], 1);
    acc[k] += __shfl_xor_sync(0xFFFFFFFFu, acc[k], 2);
  }
}

}  // namespace gpuprobe::sel
