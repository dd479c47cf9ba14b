// Lever table row 63 (a measurement): do fewer concurrent streams with the same bytes in flight
// read the per-slot union-60 gate+up bytes faster? Row 62's bench (`pair-balance/pair_bench.cu`)
// with the static deal only (block b owns range b, warp w its tiles w, w + W, ...) and the warps
// per block W and ring passes S as template arguments: W x (S - 1) passes in flight per SM, 19 x 2
// = 38 for the kernels' shape, about as many for 13 x 4, 10 x 5 and 8 x 6, twice as many for
// 19 x 5. Reports, per shape and `work` (0 or 40 rounds of FMA chains a pass), the time (median of
// 20 samples of 10 back-to-back launches) and one launch's span (first block start to last block
// end). Every shape's XOR of the words read must agree.
// Built and run on the GPU host: nvcc -O3 -arch=sm_90a stream_bench.cu && ./a.out
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

template <int kWarps, int kStages>
__global__ void __launch_bounds__(kWarps * 32, 1)
    Ring(const uint8_t* codes, const uint8_t* scales, int work, uint64_t* times) {
  extern __shared__ uint8_t smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  uint8_t* ring = smem + warp * kStages * kStageBytes;
  if (threadIdx.x == 0) times[2 * blockIdx.x] = Now();
  const int first = static_cast<int>(int64_t{blockIdx.x} * kTiles / gridDim.x);
  const int last = static_cast<int>(int64_t{blockIdx.x + 1} * kTiles / gridDim.x);
  int issued = 0, tile = first + warp, pass = 0;
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
        Copy(stage + (j * 32 + lane) * 16, code + j * 512 + lane * 16, 16);
        Copy(stage + ((2 + j) * 32 + lane) * 16, code + up_code + j * 512 + lane * 16, 16);
      }
      Copy(stage + 2048 + lane * 4, scale + lane * 4, 4);
      Copy(stage + 2048 + 128 + lane * 4, scale + up_scale + lane * 4, 4);
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
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const double bytes = double(code_total + scale_total);
  printf("warps\tstages\twork\tus\tTBps\tspread\tspan_us\txor\n");
  auto run = [&](auto kernel, int warps, int stages) {
    const int smem = warps * stages * kStageBytes;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    for (int work : {0, 40}) {
      std::vector<float> samples;
      for (int r = 0; r < 23; ++r) {
        CHECK(cudaEventRecord(a));
        for (int k = 0; k < kLaunchesPerSample; ++k) {
          kernel<<<sms, warps * 32, smem>>>(codes, scales, work, times);
        }
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 3) samples.push_back(ms * 1000.0f / kLaunchesPerSample);
      }
      uint32_t zero = 0, x = 0;
      CHECK(cudaMemcpyToSymbol(g_xor, &zero, 4));
      kernel<<<sms, warps * 32, smem>>>(codes, scales, work, times);
      CHECK(cudaGetLastError());
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
      printf("%d\t%d\t%d\t%.2f\t%.3f\t%.3f\t%.2f\t%08x\n", warps, stages, work, median,
             bytes / median / 1e6, (samples.back() - samples.front()) / median,
             (end - start) / 1000.0, x);
    }
  };
  for (int round = 0; round < 2; ++round) {
    run(Ring<19, 3>, 19, 3);
    run(Ring<13, 4>, 13, 4);
    run(Ring<10, 5>, 10, 5);
    run(Ring<8, 6>, 8, 6);
    run(Ring<19, 5>, 19, 5);
    run(Ring<20, 3>, 20, 3);
  }
  return 0;
}
