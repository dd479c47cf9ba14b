// Compile-time tuning of the sel kernels for sm_90a (the one architecture they are built for):
// chunk and pass sizes, ring depths, warps per block, and Hopper's shared-memory opt-in. What
// depends on the card at run time (SM count, L2 size, the opt-in limit the device reports)
// comes from the device (SelDevice in kernels/sel/launch_plan.h), never from a literal here.
//
//   constexpr int kStages = sel::Tuning</*kGateUpSilu=*/true, /*kOneSlot=*/true>::kStages;
#pragma once

namespace gpuprobe::sel {

constexpr int kChunkElements = 32;  // 16 code bytes of one row: 4 words, 2 scale blocks
constexpr int kMaxSplits = 8;
// A warp's partial results when a tile's K is split across warps: 4 floats per lane.
constexpr int kPartialFloatsPerWarp = 32 * 4;
// Hopper's (sm_90) shared-memory opt-in per block: CanImplementSelKernels checks a geometry
// against it before any device is chosen; launches plan against the limit the device reports.
constexpr int kMaxDynamicSmemBytes = 227 * 1024;

// Chunks per thread per row and pass, and the ring of passes a warp keeps in flight. Once the
// decode is cheap the kernels are bound by latency (ncu: long-scoreboard stalls lead), so codes
// travel in a shared-memory ring filled by cp.async: bytes in flight cost no registers. Gate+up
// rows (80 chunks at the serving geometry) take passes of 2 chunks per thread, the short down
// rows (20 chunks) passes of 1; a ring holds 6 chunks per row, which on union launches (a warp's
// items a few passes long) is most of a warp's codes, but the per-slot down's holds 4 (measured
// with the rings on a 128-byte line, H200, 2026-12-01: 6% faster than 6 at union 60, and 3, 5
// and 8 slower; the union down loses 3% with 4). Where the staged inputs of wider groups
// leave too little shared memory, the launcher gives the block fewer warps (PlanLaunch). One
// block per SM of up to 20 warps: the register cap that follows (102 per thread: 5 warps per SM
// sub-partition) has no spills.
//
// A warp's item covers kOctets octets of weight rows (rows g + 8i of lane group g): gate+up's tile
// is a gate octet and an up octet, a down tile one mma tile of 16 rows. The per-slot down takes
// wide items, two mma tiles of its slot (kPerSlotDownOctets: 32 rows, one band of the down bank's
// layout), wherever their plan splits no K (kernels/sel/launch_deals.h), so that each
// staged-input read and each item's start and end serve twice the weights: 2.43 warp instructions
// a weight against the one-tile down's 3.16 (ncu, H200, 2026-12-04). Their ring stages are twice as
// large, and 3 of them beat 4 (H200, 2026-12-04, same sitting: with 4 the wide down was 1-2% slower
// at unions 10-50).
template <bool kGateUpSilu, bool kOneSlot, int kOctetsPerItem = 2>
struct Tuning {
  static constexpr int kOctets = kOctetsPerItem;
  static_assert(kOctets == 2 || (kOctets == 4 && !kGateUpSilu && kOneSlot));
  static constexpr int kChunksPerThread = kGateUpSilu ? 2 : 1;
  static constexpr int kChunksPerPass = 4 * kChunksPerThread;  // 4 column threads per row
  static constexpr int kStages = kGateUpSilu ? 3 : !kOneSlot ? 6 : kOctets == 4 ? 3 : 4;
  // Of the kStages - 1 passes the ring holds ahead, those requested before the inputs are staged
  // (gate+up: both, but 1 in the cluster K halves: the kernel says why; down: 2 of 3 per-slot, 2
  // of 5 otherwise); the rest follow the staging. A warp issuing copies stalls until the SM's
  // memory pipeline takes them, so a long prologue delays the staging behind it and a short one
  // leaves the memory idle (H200, 2026-11-30: down with 2 of 5 before staging 3% faster than 5).
  static constexpr int kPassesBeforeStaging = 2;
  static_assert(kPassesBeforeStaging >= 1 && kPassesBeforeStaging <= kStages - 1);
};
constexpr int kMaxWarps = 20;
constexpr int kPerSlotDownOctets = 4;

}  // namespace gpuprobe::sel
