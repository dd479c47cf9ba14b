// Lever table row 64 (a measurement): what the kernels do that row 63's bench does not. Row 63's
// bench (static deal, 19 warps, a 3-pass ring) in variants that take on, one at a time, the
// kernels' own forms:
//   base:     as row 63 (plain `cp.async` 16- and 4-byte copies; each lane reads what it copied);
//   srcsize:  every copy in the src-size form the kernels use (`cp.async ... 16, %r` with the
//             register holding 16), as `CopyAsync16(..., true)` compiles;
//   wide:     the kernels' wide scale copies (the pass's 256 scale bytes copied 16 bytes a lane by
//             16 lanes, the ring's reads and refills fenced by `__syncwarp`, as the gate+up loop);
//   startup:  the kernels' start before the first pass is computed: the group data read by two
//             dependent loads and a barrier, the ring's prologue issued, two input rows of 2,560
//             floats copied, a barrier, their maxima and a barrier, their conversion in place and a
//             barrier;
//   all:      srcsize, wide and startup together;
//   groups:   startup's group data only (two dependent loads and a barrier before the prologue);
//   inputs:   startup's input rows only (their copies, the prologue behind them, the barriers,
//             maxima and conversion);
//   groups-l2, startup-l2: groups and startup launched on a stream whose L2 access policy keeps
//             the group data and the input rows (62 KB) persisting in the L2 across the weight
//             stream, as a router's output and the activations would be after the kernels that
//             wrote them;
//   barrier:  only a barrier before the prologue (no loads);
//   loads:    only the group data's two dependent loads, by lane 0 of every warp, no barrier.
// Reports, per variant and `work` (0 or 40 rounds of FMA chains a pass), the time (median of 20
// samples of 10 back-to-back launches) and one launch's span. Every variant's XOR must agree.
// Built and run on the GPU host: nvcc -O3 -arch=sm_90a copy_forms_bench.cu && ./a.out
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

constexpr int kExperts = 60;
constexpr int64_t kCodeBytes = 1638400, kScaleBytes = 204800;  // per expert
constexpr int kOctetCode = 10240, kOctetScale = 1280;
constexpr int kTilesPerExpert = 80, kPasses = 10;
constexpr int kTiles = kExperts * kTilesPerExpert;
constexpr int kStageBytes = 2048 + 256;
constexpr int kWarps = 19, kStages = 3;
constexpr int kInputs = 2560, kInputRows = 2;  // the per-slot gate+up's staged rows at t = 6
constexpr int kStartupBytes = kInputRows * kInputs * 4;
constexpr int kLaunchesPerSample = 10;

__device__ uint32_t g_xor;
__device__ float g_sink;

__device__ __forceinline__ uint64_t Now() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <bool kSrcSize>
__device__ __forceinline__ void Copy(void* to, const void* from, int bytes) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(to));
  if (kSrcSize) {
    if (bytes == 16) {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(from), "r"(16));
    } else {
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(from), "r"(4));
    }
  } else if (bytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(from));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(from));
  }
}

enum class Start { kNone, kGroups, kBarrier, kLoads };

template <bool kSrcSize, bool kWide, Start kStart, bool kInputRowsStaged>
__global__ void __launch_bounds__(kWarps * 32, 1)
    Ring(const uint8_t* codes, const uint8_t* scales, const int* group, const float* inputs,
         int work, uint64_t* times) {
  extern __shared__ uint8_t smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  constexpr bool kStartup = kInputRowsStaged;  // the shared memory holds the input rows
  float* staged = reinterpret_cast<float*>(smem);
  uint8_t* ring = smem + (kStartup ? kStartupBytes + 16 : 0) + warp * kStages * kStageBytes;
  if (threadIdx.x == 0) times[2 * blockIdx.x] = Now();
  const int first = static_cast<int>(int64_t{blockIdx.x} * kTiles / gridDim.x);
  const int last = static_cast<int>(int64_t{blockIdx.x + 1} * kTiles / gridDim.x);
  int issued = 0, tile = first + warp, pass = 0;
  __shared__ int block_group;
  if (kStart == Start::kGroups) {  // the group data: two dependent loads, then a barrier
    if (threadIdx.x == 0) block_group = group[group[blockIdx.x % 64] % 64];
    __syncthreads();
    if (block_group < 0) tile = last;  // never: keeps the loads
  } else if (kStart == Start::kBarrier) {
    __syncthreads();
  } else if (kStart == Start::kLoads) {
    int g = 0;
    if (lane == 0) g = group[group[blockIdx.x % 64] % 64];
    if (__shfl_sync(0xFFFFFFFFu, g, 0) < 0) tile = last;  // never: keeps the loads
  }
  auto issue = [&]() {
    if (pass == kPasses) {
      tile += kWarps;
      pass = 0;
    }
    if (tile < last) {
      const int e = tile / kTilesPerExpert, r = tile % kTilesPerExpert;
      const uint8_t* code = codes + e * kCodeBytes + int64_t{r} * kOctetCode + pass * 1024;
      const uint8_t* scale = scales + e * kScaleBytes + int64_t{r} * kOctetScale + pass * 128;
      const int64_t up_code = int64_t{kTilesPerExpert} * kOctetCode;
      const int64_t up_scale = int64_t{kTilesPerExpert} * kOctetScale;
      uint8_t* stage = ring + (issued % kStages) * kStageBytes;
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        Copy<kSrcSize>(stage + (j * 32 + lane) * 16, code + j * 512 + lane * 16, 16);
        Copy<kSrcSize>(stage + ((2 + j) * 32 + lane) * 16, code + up_code + j * 512 + lane * 16,
                       16);
      }
      if (kWide) {  // 16 lanes copy the pass's 2 x 128 scale bytes 16 bytes each
        if (lane < 16) {
          Copy<kSrcSize>(stage + 2048 + lane * 16, (lane < 8 ? scale : scale + up_scale) +
                         (lane % 8) * 16, 16);
        }
      } else {
        Copy<kSrcSize>(stage + 2048 + lane * 4, scale + lane * 4, 4);
        Copy<kSrcSize>(stage + 2048 + 128 + lane * 4, scale + up_scale + lane * 4, 4);
      }
      ++pass;
      ++issued;
    }
    asm volatile("cp.async.commit_group;\n");
  };
  // The start as the kernels': the input rows' copies, then the ring's prologue; once the inputs
  // have landed a barrier, the rows' maxima, a barrier, their conversion in place, a barrier.
  if (kStartup) {
    for (int i = threadIdx.x; i < kInputRows * kInputs / 4; i += blockDim.x) {
      Copy<kSrcSize>(staged + 4 * i, inputs + (blockIdx.x % 6) * kInputs + 4 * i, 16);
    }
    asm volatile("cp.async.commit_group;\n");
  }
  for (int s = 0; s < kStages - 1; ++s) issue();
  if (kStartup) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 1));
    __syncthreads();
    __shared__ unsigned row_max[kInputRows];
    if (threadIdx.x < kInputRows) row_max[threadIdx.x] = 0;
    __syncthreads();
    // As the kernels: each warp walks part of one row, reduces its lanes' maxima and adds them
    // with one atomic (the first run here took an atomic per element: see run-first/).
    const int warps_per_row = kWarps / kInputRows;
    const int row = warp / warps_per_row, part = warp % warps_per_row;
    if (row < kInputRows) {
      unsigned m = 0;
      for (int i = part * 32 + lane; i < kInputs; i += warps_per_row * 32) {
        m = max(m, __float_as_uint(fabsf(staged[row * kInputs + i])));
      }
      m = __reduce_max_sync(0xFFFFFFFFu, m);
      if (lane == 0) atomicMax(&row_max[row], m);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < kInputRows * kInputs; i += blockDim.x) {
      staged[i] = staged[i] / __uint_as_float(row_max[i / kInputs] | 1u);
    }
    __syncthreads();
  }
  uint32_t acc = 0;
  float f0 = lane, f1 = lane + 1, f2 = lane + 2, f3 = lane + 3;
  for (int step = 0; step < issued; ++step) {
    if (kWide) __syncwarp();  // the stage refilled next is free once every lane has read it
    issue();
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 1));
    if (kWide) __syncwarp();  // ... and the scale bytes other lanes copied have landed
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
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int64_t code_total = kExperts * kCodeBytes, scale_total = kExperts * kScaleBytes;
  uint8_t *codes, *scales;
  int* group;  // the group data, then the input rows: one range for the L2 access policy
  float* inputs;
  const size_t small_bytes = 64 * sizeof(int) + 6 * kInputs * sizeof(float);
  uint64_t* times;
  CHECK(cudaMalloc(&codes, code_total));
  CHECK(cudaMalloc(&scales, scale_total));
  CHECK(cudaMalloc(&group, small_bytes));
  inputs = reinterpret_cast<float*>(group + 64);
  CHECK(cudaMalloc(&times, 2 * sms * sizeof(uint64_t)));
  {
    std::vector<uint32_t> host(code_total / 4);
    uint32_t x = 12345;
    for (auto& w : host) w = x = x * 1664525u + 1013904223u;
    CHECK(cudaMemcpy(codes, host.data(), code_total, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(scales, host.data() + 7, scale_total, cudaMemcpyHostToDevice));
    std::vector<int> g(64);
    for (int i = 0; i < 64; ++i) g[i] = (i * 7 + 3) % 64;
    CHECK(cudaMemcpy(group, g.data(), g.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<float> in(6 * kInputs);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 97) - 48.0f;
    CHECK(cudaMemcpy(inputs, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const double bytes = double(code_total + scale_total);
  printf("variant\twork\tus\tTBps\tspread\tspan_us\txor\n");
  cudaStream_t plain, persisting;
  CHECK(cudaStreamCreate(&plain));
  CHECK(cudaStreamCreate(&persisting));
  {
    int limit = 0;
    CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxPersistingL2CacheSize, 0));
    CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, std::min<size_t>(limit, 1 << 20)));
    cudaStreamAttrValue window{};
    window.accessPolicyWindow.base_ptr = group;
    window.accessPolicyWindow.num_bytes = small_bytes;
    window.accessPolicyWindow.hitRatio = 1.0f;
    window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CHECK(cudaStreamSetAttribute(persisting, cudaStreamAttributeAccessPolicyWindow, &window));
  }
  auto run = [&](auto kernel, const char* name, bool startup, cudaStream_t stream) {
    const int smem = (startup ? kStartupBytes + 16 : 0) + kWarps * kStages * kStageBytes;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    for (int work : {0, 40}) {
      std::vector<float> samples;
      for (int r = 0; r < 23; ++r) {
        CHECK(cudaEventRecord(a, stream));
        for (int k = 0; k < kLaunchesPerSample; ++k) {
          kernel<<<sms, kWarps * 32, smem, stream>>>(codes, scales, group, inputs, work, times);
        }
        CHECK(cudaEventRecord(b, stream));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 3) samples.push_back(ms * 1000.0f / kLaunchesPerSample);
      }
      uint32_t zero = 0, x = 0;
      CHECK(cudaMemcpyToSymbol(g_xor, &zero, 4));
      kernel<<<sms, kWarps * 32, smem, stream>>>(codes, scales, group, inputs, work, times);
      CHECK(cudaStreamSynchronize(stream));
      CHECK(cudaMemcpyFromSymbol(&x, g_xor, 4));
      std::vector<uint64_t> t(2 * sms);
      CHECK(cudaMemcpy(t.data(), times, t.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
      uint64_t start = UINT64_MAX, end = 0;
      for (int i = 0; i < sms; ++i) {
        start = std::min(start, t[2 * i]);
        end = std::max(end, t[2 * i + 1]);
      }
      std::sort(samples.begin(), samples.end());
      const float median = samples[samples.size() / 2];
      printf("%s\t%d\t%.2f\t%.3f\t%.3f\t%.2f\t%08x\n", name, work, median, bytes / median / 1e6,
             (samples.back() - samples.front()) / median, (end - start) / 1000.0, x);
    }
  };
  for (int round = 0; round < 2; ++round) {
    run(Ring<false, false, Start::kNone, false>, "base", false, plain);
    run(Ring<true, false, Start::kNone, false>, "srcsize", false, plain);
    run(Ring<false, true, Start::kNone, false>, "wide", false, plain);
    run(Ring<false, false, Start::kGroups, true>, "startup", true, plain);
    run(Ring<true, true, Start::kGroups, true>, "all", true, plain);
    run(Ring<false, false, Start::kGroups, false>, "groups", false, plain);
    run(Ring<false, false, Start::kNone, true>, "inputs", true, plain);
    run(Ring<false, false, Start::kGroups, false>, "groups-l2", false, persisting);
    run(Ring<false, false, Start::kGroups, true>, "startup-l2", true, persisting);
    run(Ring<false, false, Start::kNone, false>, "base-l2", false, persisting);
    run(Ring<false, false, Start::kBarrier, false>, "barrier", false, plain);
    run(Ring<false, false, Start::kLoads, false>, "loads", false, plain);
  }
  return 0;
}
