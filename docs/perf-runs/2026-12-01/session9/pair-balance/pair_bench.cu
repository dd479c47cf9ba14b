// Lever table row 62 (a measurement): does balancing the per-slot gate+up's tail in K parts pay,
// within a block or across a pair of blocks? Row 23's bench (`2026-11-30/sm-balance/
// balance_bench.cu`: the union-60 gate+up bytes of 60 contiguous experts, one block of 19 warps
// per SM, a 3-pass cp.async ring, 1 KB of a tile's gate octet and of its up octet plus their
// scales per pass, each pass followed by `work` rounds of 4 FMA chains) with three deals:
//   static:      as the sel kernels: block b owns range b, warp w its tiles w, w + 19, ...;
//   block-parts: each warp's first tile as static; the range's other tiles in K fifths (2 passes),
//                claimed by the block's warps from a counter in shared memory;
//   pair-parts:  clusters of two blocks half the grid apart in the tile order (rank 0 range c,
//                rank 1 range c + 66); as block-parts, and once its own range's fifths are
//                claimed a warp claims its partner's through distributed shared memory.
// A fifth's hand-back of partial sums is stood in for by one atomic add on a per-tile counter in
// the owner block's shared memory (remote for a borrowed fifth). Reports the time (median of 20
// samples of 10 back-to-back launches), and of one more launch each block's time from its start to
// its last warp's end (min / median / max) and the launch's span. Every deal's XOR of the words
// read must agree.
// Built and run on the GPU host: nvcc -O3 -arch=sm_90a pair_bench.cu && ./a.out
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                         \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

namespace cg = cooperative_groups;

constexpr int kExperts = 60;
constexpr int64_t kCodeBytes = 1638400, kScaleBytes = 204800;  // per expert
constexpr int kOctetCode = 10240, kOctetScale = 1280;
constexpr int kTilesPerExpert = 80, kPasses = 10, kParts = 5;
constexpr int kTiles = kExperts * kTilesPerExpert;
constexpr int kWarps = 19, kStages = 3, kStageBytes = 2048 + 256;
constexpr int kMaxRangeTiles = 64;
// The claim counter and the parts' counters, then the rings (16-byte aligned for the copies).
constexpr int kHeaderBytes = (4 * (1 + kMaxRangeTiles) + 15) / 16 * 16;
constexpr int kSmemBytes = kHeaderBytes + kWarps * kStages * kStageBytes;
constexpr int kLaunchesPerSample = 10;

__device__ uint32_t g_xor;
__device__ float g_sink;

__device__ __forceinline__ uint64_t Now() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void Copy(void* to, const void* from, int bytes) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(to));
  if (bytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(from));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(from));
  }
}

enum class Deal { kStatic, kBlockParts, kPairParts };

__device__ __forceinline__ int RangeStart(int range) {
  return static_cast<int>(int64_t{range} * kTiles / gridDim.x);
}

// Where a warp reads: passes [pass, end) of `tile`; `done` is the owner's counter of the tile's
// parts (nullptr for a whole tile).
struct Unit {
  int tile, pass, end;
  int* done;
};

template <Deal kDeal>
__global__ void __launch_bounds__(kWarps * 32, 1)
    Ring(const uint8_t* codes, const uint8_t* scales, int work, uint64_t* times) {
  extern __shared__ uint8_t smem[];
  int* counter = reinterpret_cast<int*>(smem);
  int* parts_done = counter + 1;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  uint8_t* ring = smem + kHeaderBytes + warp * kStages * kStageBytes;
  if (threadIdx.x == 0) {
    times[2 * blockIdx.x] = Now();
    *counter = 0;
  }
  for (int i = threadIdx.x; i < kMaxRangeTiles; i += blockDim.x) parts_done[i] = 0;
  int range = blockIdx.x, partner_range = -1;
  int* partner_counter = nullptr;
  int* partner_done = nullptr;
  if constexpr (kDeal == Deal::kPairParts) {
    const cg::cluster_group cluster = cg::this_cluster();
    const int rank = static_cast<int>(cluster.block_rank());
    const int pair = blockIdx.x / 2, half = gridDim.x / 2;
    range = rank == 0 ? pair : pair + half;
    partner_range = rank == 0 ? pair + half : pair;
    partner_counter = cluster.map_shared_rank(counter, 1 - rank);
    partner_done = partner_counter + 1;
    cluster.sync();  // both blocks' counters are zero before either claims
  } else {
    __syncthreads();
  }
  const int first = RangeStart(range), last = RangeStart(range + 1);
  // Claim u of a range: its tiles after the first round, in K fifths.
  auto part_of = [&](int u, int range_first, int range_last, int* done, Unit& unit) {
    const int tiles = range_last - (range_first + kWarps);
    if (u >= tiles * kParts) return false;
    const int local = kWarps + u / kParts;
    unit = {range_first + local, (u % kParts) * (kPasses / kParts),
            (u % kParts + 1) * (kPasses / kParts), done + local};
    return true;
  };
  auto claim = [&](int* on) {
    int u = 0;
    if (lane == 0) u = atomicAdd(on, 1);
    return __shfl_sync(0xFFFFFFFFu, u, 0);
  };
  int whole = 0;  // whole tiles taken: static, every round; the parts deals, the first
  bool own_left = true;
  auto next_unit = [&](Unit& unit) {
    if (kDeal == Deal::kStatic || whole == 0) {
      const int tile = first + warp + kWarps * whole++;
      unit = {tile, 0, kPasses, nullptr};
      return tile < last;
    }
    if (own_left) {
      if (part_of(claim(counter), first, last, parts_done, unit)) return true;
      own_left = false;
    }
    if constexpr (kDeal == Deal::kPairParts) {
      return part_of(claim(partner_counter), RangeStart(partner_range),
                     RangeStart(partner_range + 1), partner_done, unit);
    }
    return false;
  };
  int issued = 0;
  Unit unit{0, 0, 0, nullptr};
  bool more = next_unit(unit);
  auto issue = [&]() {
    if (more && unit.pass == unit.end) more = next_unit(unit);
    if (more) {
      const int e = unit.tile / kTilesPerExpert, r = unit.tile % kTilesPerExpert;
      const uint8_t* code =
          codes + e * kCodeBytes + int64_t{r} * kOctetCode + unit.pass * 1024;
      const uint8_t* scale =
          scales + e * kScaleBytes + int64_t{r} * kOctetScale + unit.pass * 128;
      const int64_t up_code = int64_t{kTilesPerExpert} * kOctetCode;
      const int64_t up_scale = int64_t{kTilesPerExpert} * kOctetScale;
      uint8_t* stage = ring + (issued % kStages) * kStageBytes;
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        Copy(stage + (j * 32 + lane) * 16, code + j * 512 + lane * 16, 16);
        Copy(stage + ((2 + j) * 32 + lane) * 16, code + up_code + j * 512 + lane * 16, 16);
      }
      Copy(stage + 2048 + lane * 4, scale + lane * 4, 4);
      Copy(stage + 2048 + 128 + lane * 4, scale + up_scale + lane * 4, 4);
      if (++unit.pass == unit.end && unit.done != nullptr && lane == 0) atomicAdd(unit.done, 1);
      ++issued;
    }
    asm volatile("cp.async.commit_group;\n");
  };
  for (int s = 0; s < kStages - 1; ++s) issue();
  uint32_t acc = 0;
  float f0 = lane, f1 = lane + 1, f2 = lane + 2, f3 = lane + 3;
  for (int step = 0; step < issued; ++step) {
    issue();
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 1));
    const uint8_t* stage = ring + (step % kStages) * kStageBytes;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint4 v = reinterpret_cast<const uint4*>(stage)[k * 32 + lane];
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    const uint32_t* words = reinterpret_cast<const uint32_t*>(stage + 2048);
    acc ^= words[lane] ^ words[32 + lane];
    const float x = __uint_as_float((acc & 0x007FFFFFu) | 0x3F800000u);
#pragma unroll 4
    for (int i = 0; i < work; ++i) {
      f0 = fmaf(f0, x, 0.5f);
      f1 = fmaf(f1, x, 0.25f);
      f2 = fmaf(f2, x, 0.125f);
      f3 = fmaf(f3, x, 0.0625f);
    }
  }
  asm volatile("cp.async.wait_group 0;\n");
  if (f0 + f1 + f2 + f3 == 1.2345f) g_sink = f0;  // keeps the work
  for (int o = 16; o > 0; o /= 2) acc ^= __shfl_xor_sync(0xFFFFFFFFu, acc, o);
  if (lane == 0) atomicXor(&g_xor, acc);
  __syncthreads();
  if (threadIdx.x == 0) times[2 * blockIdx.x + 1] = Now();
  // A block's shared memory must outlive its partner's claims on it.
  if constexpr (kDeal == Deal::kPairParts) cg::this_cluster().sync();
}

struct Timing {
  float us, spread;
  double block_min, block_median, block_max, span;
  uint32_t xor_value;
};

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (sms % 2 != 0 || (kTiles + sms - 1) / sms > kMaxRangeTiles) {
    fprintf(stderr, "this bench needs an even SM count and at most %d tiles a block\n",
            kMaxRangeTiles);
    return 1;
  }
  const int64_t code_total = kExperts * kCodeBytes, scale_total = kExperts * kScaleBytes;
  uint8_t *codes, *scales;
  uint64_t* times;
  CHECK(cudaMalloc(&codes, code_total));
  CHECK(cudaMalloc(&scales, scale_total));
  CHECK(cudaMalloc(&times, 2 * sms * sizeof(uint64_t)));
  {
    std::vector<uint32_t> host(code_total / 4);
    uint32_t x = 12345;
    for (auto& w : host) w = x = x * 1664525u + 1013904223u;
    CHECK(cudaMemcpy(codes, host.data(), code_total, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(scales, host.data() + 7, scale_total, cudaMemcpyHostToDevice));
  }
  const auto max_smem = cudaFuncAttributeMaxDynamicSharedMemorySize;
  CHECK(cudaFuncSetAttribute(Ring<Deal::kStatic>, max_smem, kSmemBytes));
  CHECK(cudaFuncSetAttribute(Ring<Deal::kBlockParts>, max_smem, kSmemBytes));
  CHECK(cudaFuncSetAttribute(Ring<Deal::kPairParts>, max_smem, kSmemBytes));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const double bytes = double(code_total + scale_total);
  auto launch = [&](Deal deal, int work) {
    if (deal == Deal::kPairParts) {
      cudaLaunchAttribute attribute{};
      attribute.id = cudaLaunchAttributeClusterDimension;
      attribute.val.clusterDim = {2, 1, 1};
      cudaLaunchConfig_t config{};
      config.gridDim = dim3(sms);
      config.blockDim = dim3(kWarps * 32);
      config.dynamicSmemBytes = kSmemBytes;
      config.attrs = &attribute;
      config.numAttrs = 1;
      CHECK(cudaLaunchKernelEx(&config, Ring<Deal::kPairParts>, codes, scales, work, times));
    } else if (deal == Deal::kBlockParts) {
      Ring<Deal::kBlockParts><<<sms, kWarps * 32, kSmemBytes>>>(codes, scales, work, times);
    } else {
      Ring<Deal::kStatic><<<sms, kWarps * 32, kSmemBytes>>>(codes, scales, work, times);
    }
  };
  // 20 samples of 10 launches (after 3), then one more launch for the XOR and the blocks' times.
  auto measure = [&](Deal deal, int work) {
    std::vector<float> samples;
    for (int r = 0; r < 23; ++r) {
      CHECK(cudaEventRecord(a));
      for (int k = 0; k < kLaunchesPerSample; ++k) launch(deal, work);
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      if (r >= 3) samples.push_back(ms * 1000.0f / kLaunchesPerSample);
    }
    uint32_t zero = 0, x = 0;
    CHECK(cudaMemcpyToSymbol(g_xor, &zero, 4));
    launch(deal, work);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyFromSymbol(&x, g_xor, 4));
    std::vector<uint64_t> t(2 * sms);
    CHECK(cudaMemcpy(t.data(), times, t.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    std::vector<double> block_us;
    uint64_t start = UINT64_MAX, end = 0;
    for (int i = 0; i < sms; ++i) {
      block_us.push_back((t[2 * i + 1] - t[2 * i]) / 1000.0);
      start = std::min(start, t[2 * i]);
      end = std::max(end, t[2 * i + 1]);
    }
    std::sort(block_us.begin(), block_us.end());
    std::sort(samples.begin(), samples.end());
    const float median = samples[samples.size() / 2];
    return Timing{median, (samples.back() - samples.front()) / median, block_us.front(),
                  block_us[sms / 2], block_us.back(), (end - start) / 1000.0, x};
  };
  printf(
      "deal\twork\tus\tTBps\tspread\tblock_min_us\tblock_median_us\tblock_max_us\tspan_us\txor\n");
  for (int round = 0; round < 2; ++round) {
    for (int work : {0, 40}) {
      for (Deal deal : {Deal::kStatic, Deal::kBlockParts, Deal::kPairParts}) {
        const Timing t = measure(deal, work);
        printf("%s\t%d\t%.2f\t%.3f\t%.3f\t%.2f\t%.2f\t%.2f\t%.2f\t%08x\n",
               deal == Deal::kStatic       ? "static"
               : deal == Deal::kBlockParts ? "block-parts"
                                           : "pair-parts",
               work, t.us, bytes / t.us / 1e6, t.spread, t.block_min, t.block_median, t.block_max,
               t.span, t.xor_value);
      }
    }
  }
  return 0;
}
