// Are the per-slot sel kernels at union 60 held back by SMs that finish late? (docs/PERF.md, lever
// table row 23.) ncu on the kernels after lever 20 (`session4/lever20/profile/ncu-raw.csv.gz`):
// per-slot gate+up at union 60, sm__cycles_active min / avg / max = 45.9 K / 56.2 K / 66.8 K of
// 70.3 K elapsed, while at union 10 (L2-resident) 42.8 K / 43.9 K / 45.6 K.
//
// The same reads as the sel kernels (locality_bench.cu's `streams`: the union-60 gate+up bytes, one
// block of 19 warps per SM, 1 KB of a tile's gate octet and of its up octet plus their scales per
// pass, a 3-pass cp.async ring), each pass followed by `work` rounds of 4 independent FMA chains
// in place of the decode and the mma (0: pure reading; 40: about the 250 instructions of a
// gate+up pass), and the tiles dealt two ways:
//   static:  as the sel kernels: block b owns a contiguous range, warp w its tiles w, w + 19, ...;
//   dynamic: every warp takes its next tile from one counter (an atomic add per tile);
//   neighbours: every block's range as in static, taken from the front through a counter of its
//            own; a warp whose block's range is done takes tiles from the next block's range,
//            then the previous one's (a block that finishes early takes over its neighbours'
//            ends). A warp claims its next tile when it starts a tile, so the atomic's round trip
//            hides behind a tile's passes.
// Reports the time (median of 20 samples of 10 back-to-back launches), and of one more launch
// each block's time from its start to its last warp's end (min / median / max) and the launch's
// span (first start to last end). Every way's XOR of the words must agree.
// `./a.out copies` instead times the static deal with the sel kernels' own scale copies (each
// lane copies the 4-byte word that holds its scale pair, 4 copies per pass, pairs of lanes the
// same word; this bench's own deal copies 2 distinct words per lane) and with the kernels'
// shared-memory size (185 KB, so the L1 keeps what the kernels leave it), each alone and both.
// Built and run on the GPU host: nvcc -O3 -arch=sm_90a balance_bench.cu && ./a.out [copies]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(x)                                                                         \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

constexpr int kExperts = 60;
constexpr int64_t kCodeBytes = 1638400, kScaleBytes = 204800;  // per expert
constexpr int kOctetCode = 10240, kOctetScale = 1280;
constexpr int kTilesPerExpert = 80, kPasses = 10;
constexpr int kTiles = kExperts * kTilesPerExpert;
constexpr int kWarps = 19, kStages = 3;
// A ring stage: the codes, then the scale words (2 or, as the kernels copy them, 4 per lane).
__host__ __device__ constexpr int StageBytes(bool kernel_scales) {
  return 2048 + (kernel_scales ? 512 : 256);
}
// The sel kernels' dynamic shared memory per block at this geometry (ncu: 184.77 KB).
constexpr int kKernelSmemBytes = 189204;
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

enum class Deal { kStatic, kDynamic, kNeighbours };

__device__ __forceinline__ int RangeStart(int block) {
  return static_cast<int>(int64_t{block} * kTiles / gridDim.x);
}

template <Deal kDeal, bool kKernelScales>
__global__ void __launch_bounds__(kWarps * 32, 1)
    Ring(const uint8_t* codes, const uint8_t* scales, int work, int* counter, uint64_t* times) {
  extern __shared__ uint8_t smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) times[2 * blockIdx.x] = Now();
  constexpr int kStageBytes = StageBytes(kKernelScales);
  uint8_t* ring = smem + warp * kStages * kStageBytes;
  const int first = RangeStart(blockIdx.x), last = RangeStart(blockIdx.x + 1);
  int claims = 0;
  // Neighbours: the block's own range, then the next block's, then the previous one's. A claim
  // is an atomic add on the range's counter, issued when the warp starts a tile and read when it
  // needs the next one, so its round trip hides behind the tile's passes.
  int victim = 0, pending = 0;  // victim 0: this block, 1: the next, 2: the previous
  auto victim_block = [&]() {
    return static_cast<int>(blockIdx.x) + (victim == 1) - (victim == 2);
  };
  auto request = [&]() {
    const int block = victim_block();
    if (lane == 0 && block >= 0 && block < static_cast<int>(gridDim.x)) {
      pending = atomicAdd(counter + block, 1);
    }
  };
  auto resolve = [&]() {
    for (; victim < 3; ++victim, request()) {
      const int block = victim_block();
      if (block < 0 || block >= static_cast<int>(gridDim.x)) continue;
      const int tile = RangeStart(block) + __shfl_sync(0xFFFFFFFFu, pending, 0);
      if (tile < RangeStart(block + 1)) return tile;
    }
    return -1;
  };
  if (kDeal == Deal::kNeighbours) request();
  auto next_tile = [&]() {
    if (kDeal == Deal::kNeighbours) {
      const int t = resolve();
      if (t >= 0) request();
      return t;
    }
    if (kDeal == Deal::kDynamic) {
      int t = 0;
      if (lane == 0) t = atomicAdd(counter, 1);
      t = __shfl_sync(0xFFFFFFFFu, t, 0);
      return t < kTiles ? t : -1;
    }
    const int t = first + warp + kWarps * claims++;
    return t < last ? t : -1;
  };
  // The load side deals the tiles; the compute side consumes every pass it issued.
  int issued = 0, tile = -1, pass = kPasses;
  bool more = true;
  auto issue = [&]() {
    if (more && pass == kPasses) {
      tile = next_tile();
      pass = 0;
      more = tile >= 0;
    }
    if (more) {
      const int e = tile / kTilesPerExpert, r = tile % kTilesPerExpert;
      const uint8_t* code = codes + e * kCodeBytes + int64_t{r} * kOctetCode + pass * 1024;
      const uint8_t* scale = scales + e * kScaleBytes + int64_t{r} * kOctetScale + pass * 128;
      const int64_t up_code = int64_t{kTilesPerExpert} * kOctetCode;
      const int64_t up_scale = int64_t{kTilesPerExpert} * kOctetScale;
      uint8_t* stage = ring + (issued % kStages) * kStageBytes;
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        Copy(stage + (j * 32 + lane) * 16, code + j * 512 + lane * 16, 16);
        Copy(stage + ((2 + j) * 32 + lane) * 16, code + up_code + j * 512 + lane * 16, 16);
      }
      if (kKernelScales) {
        // As IssuePass: lane's pair 32j + lane of the pass, the aligned word that holds it.
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int word = 2 * ((32 * j + lane) & ~1);
          Copy(stage + 2048 + (j * 32 + lane) * 4, scale + word, 4);
          Copy(stage + 2048 + ((2 + j) * 32 + lane) * 4, scale + up_scale + word, 4);
        }
      } else {
        Copy(stage + 2048 + lane * 4, scale + lane * 4, 4);
        Copy(stage + 2048 + 128 + lane * 4, scale + up_scale + lane * 4, 4);
      }
      ++pass;
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
    if (!kKernelScales) {
      acc ^= words[lane] ^ words[32 + lane];
    } else if (lane % 2 == 0) {  // the odd lanes hold copies of the same words
#pragma unroll
      for (int k = 0; k < 4; ++k) acc ^= words[k * 32 + lane];
    }
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
}

struct Timing {
  float us, spread;
  double block_min, block_median, block_max, span;
  uint32_t xor_value;
};

int main(int argc, char** argv) {
  const bool copies = argc > 1 && std::string(argv[1]) == "copies";
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int64_t code_total = kExperts * kCodeBytes, scale_total = kExperts * kScaleBytes;
  uint8_t *codes, *scales;
  int* counters;
  uint64_t* times;
  CHECK(cudaMalloc(&codes, code_total));
  CHECK(cudaMalloc(&scales, scale_total));
  // One counter per block for each launch of a sample (neighbours; dynamic uses the first).
  const size_t counter_bytes = size_t{kLaunchesPerSample} * sms * sizeof(int);
  CHECK(cudaMalloc(&counters, counter_bytes));
  CHECK(cudaMalloc(&times, 2 * sms * sizeof(uint64_t)));
  {
    std::vector<uint32_t> host(code_total / 4);
    uint32_t x = 12345;
    for (auto& w : host) w = x = x * 1664525u + 1013904223u;
    CHECK(cudaMemcpy(codes, host.data(), code_total, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(scales, host.data() + 7, scale_total, cudaMemcpyHostToDevice));
  }
  const auto max_smem = cudaFuncAttributeMaxDynamicSharedMemorySize;
  CHECK(cudaFuncSetAttribute(Ring<Deal::kStatic, false>, max_smem, kKernelSmemBytes));
  CHECK(cudaFuncSetAttribute(Ring<Deal::kStatic, true>, max_smem, kKernelSmemBytes));
  CHECK(cudaFuncSetAttribute(Ring<Deal::kDynamic, false>, max_smem, kKernelSmemBytes));
  CHECK(cudaFuncSetAttribute(Ring<Deal::kNeighbours, false>, max_smem, kKernelSmemBytes));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const double bytes = double(code_total + scale_total);
  // 20 samples of 10 launches (after 3), then one more launch for the XOR and the blocks' times.
  auto measure = [&](auto launch) {
    std::vector<float> samples;
    for (int r = 0; r < 23; ++r) {
      CHECK(cudaMemset(counters, 0, counter_bytes));
      CHECK(cudaEventRecord(a));
      for (int k = 0; k < kLaunchesPerSample; ++k) launch(counters + k * sms);
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      if (r >= 3) samples.push_back(ms * 1000.0f / kLaunchesPerSample);
    }
    uint32_t zero = 0, x = 0;
    CHECK(cudaMemset(counters, 0, counter_bytes));
    CHECK(cudaMemcpyToSymbol(g_xor, &zero, 4));
    launch(counters);
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
    return Timing{median,
                  (samples.back() - samples.front()) / median,
                  block_us.front(),
                  block_us[sms / 2],
                  block_us.back(),
                  (end - start) / 1000.0,
                  x};
  };
  auto print = [&](const Timing& t) {
    printf("%.2f\t%.3f\t%.3f\t%.2f\t%.2f\t%.2f\t%.2f\t%08x\n", t.us, bytes / t.us / 1e6, t.spread,
           t.block_min, t.block_median, t.block_max, t.span, t.xor_value);
  };
  const dim3 grid(sms), block(kWarps * 32);
  if (copies) {
    printf(
        "scales\tsmem_bytes\twork\tus\tTBps\tspread\tblock_min_us\tblock_median_us\t"
        "block_max_us\tspan_us\txor\n");
    for (int round = 0; round < 2; ++round) {
      for (int work : {0, 40}) {
        for (bool kernel_scales : {false, true}) {
          for (bool kernel_smem : {false, true}) {
            const int ring = kWarps * kStages * StageBytes(kernel_scales);
            const int smem = kernel_smem ? kKernelSmemBytes : ring;
            const Timing t = measure([&](int* counter) {
              if (kernel_scales) {
                Ring<Deal::kStatic, true>
                    <<<grid, block, smem>>>(codes, scales, work, counter, times);
              } else {
                Ring<Deal::kStatic, false>
                    <<<grid, block, smem>>>(codes, scales, work, counter, times);
              }
            });
            printf("%s\t%d\t%d\t", kernel_scales ? "kernel" : "bench", smem, work);
            print(t);
          }
        }
      }
    }
    return 0;
  }
  const int smem = kWarps * kStages * StageBytes(false);
  printf(
      "deal\twork\tus\tTBps\tspread\tblock_min_us\tblock_median_us\tblock_max_us\tspan_us\txor\n");
  for (int round = 0; round < 2; ++round) {
    for (int work : {0, 40}) {
      for (Deal deal : {Deal::kStatic, Deal::kDynamic, Deal::kNeighbours}) {
        const Timing t = measure([&](int* counter) {
          if (deal == Deal::kDynamic) {
            Ring<Deal::kDynamic, false><<<grid, block, smem>>>(codes, scales, work, counter, times);
          } else if (deal == Deal::kNeighbours) {
            Ring<Deal::kNeighbours, false>
                <<<grid, block, smem>>>(codes, scales, work, counter, times);
          } else {
            Ring<Deal::kStatic, false><<<grid, block, smem>>>(codes, scales, work, counter, times);
          }
        });
        printf("%s\t%d\t",
               deal == Deal::kStatic    ? "static"
               : deal == Deal::kDynamic ? "dynamic"
                                        : "neighbours",
               work);
        print(t);
      }
    }
  }
  return 0;
}
