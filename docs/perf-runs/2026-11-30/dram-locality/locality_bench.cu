// Does the sel kernels' access pattern cost DRAM efficiency? (docs/PERF.md, lever 18.)
//
// Reads the per-slot union-60 gate+up bytes of the serving geometry (60 experts x 1,638,400
// code bytes + 204,800 scale bytes = 110.6 MB) three ways, computing nothing but an XOR of the
// words (which must agree across the ways, so each reads every byte once):
//   sweep:   the floor kernel's pattern: 4 blocks of 512 threads per SM, grid-stride, 4 16-byte
//            loads in flight per thread, so the whole card sweeps one window of memory at a time;
//   streams: the sel kernels' pattern: one block of 19 warps per SM, a block a contiguous range
//            of tiles, warp w its tiles w, w + 19, ...; per pass a warp reads 1 KB of its gate
//            octet and 1 KB of its up octet (10 KB apart per tile, 800 KB apart per expert)
//            plus 128 bytes of each octet's scales, through a cp.async ring of kStages passes;
//   panels:  the same kernel and work, the bytes permuted so that the 19 warps' passes of one
//            round sit side by side: each block sweeps one window of its range at a time.
// Built and run on the GPU host: nvcc -O3 -arch=sm_90a locality_bench.cu && ./a.out
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                    \
  do {                                                                              \
    cudaError_t e_ = (x);                                                           \
    if (e_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

constexpr int kExperts = 60;
constexpr int64_t kCodeBytes = 1638400;  // per expert: 1280 rows x 2560 / 2
constexpr int64_t kScaleBytes = 204800;  // per expert: 1280 rows x 2560 / 16
constexpr int kOctetCode = 10240;        // 8 rows x 80 chunks x 16 bytes
constexpr int kOctetScale = 1280;
constexpr int kTilesPerExpert = 80;      // gate octets 0..79, up octets 80..159
constexpr int kPasses = 10;              // 1 KB of an octet per pass
constexpr int kTiles = kExperts * kTilesPerExpert;
constexpr int kWarps = 19;
constexpr int kStageBytes = 2048 + 256;

__device__ uint32_t g_xor;

__global__ void __launch_bounds__(512) Sweep(const uint4* codes, int64_t code_vectors,
                                             const uint4* scales, int64_t scale_vectors) {
  uint32_t acc = 0;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int part = 0; part < 2; ++part) {
    const uint4* base = part == 0 ? codes : scales;
    const int64_t n = part == 0 ? code_vectors : scale_vectors;
    for (int64_t q = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; q < n; q += 4 * stride) {
      uint4 v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        v[k] = q + k * stride < n ? __ldg(base + q + k * stride) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
    }
  }
  for (int o = 16; o > 0; o /= 2) acc ^= __shfl_xor_sync(0xFFFFFFFFu, acc, o);
  if (threadIdx.x % 32 == 0) atomicXor(&g_xor, acc);
}

__device__ __forceinline__ void Copy(void* to, const void* from, int bytes) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(to));
  if (bytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(from));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(from));
  }
}

// Where pass p of the warp's item i (tile first + i) reads: code and scale bases of the gate
// half (the up half at +up_code / +up_scale).
template <bool kPanel>
__device__ __forceinline__ void PassBases(const uint8_t* codes, const uint8_t* scales, int first,
                                          int n, int i, int p, const uint8_t*& code,
                                          const uint8_t*& scale, int64_t& up_code,
                                          int64_t& up_scale) {
  if (!kPanel) {
    const int t = first + i, e = t / kTilesPerExpert, r = t % kTilesPerExpert;
    code = codes + e * kCodeBytes + int64_t{r} * kOctetCode + p * 1024;
    scale = scales + e * kScaleBytes + int64_t{r} * kOctetScale + p * 128;
    up_code = int64_t{kTilesPerExpert} * kOctetCode;
    up_scale = int64_t{kTilesPerExpert} * kOctetScale;
    return;
  }
  // The block's bytes (tiles [first, first + n), 20,480 code and 2,560 scale bytes each, laid
  // end to end) in the order [round][pass][warp of the round].
  const int round = i / kWarps, w = i % kWarps;
  const int in_round = min(kWarps, n - round * kWarps);
  const int64_t unit = int64_t{round} * kWarps * kPasses + p * in_round + w;
  code = codes + int64_t{first} * 20480 + unit * 2048;
  scale = scales + int64_t{first} * 2560 + unit * 256;
  up_code = 1024;
  up_scale = 128;
}

template <bool kPanel, int kStages>
__global__ void __launch_bounds__(kWarps * 32, 1) Ring(const uint8_t* codes,
                                                       const uint8_t* scales) {
  extern __shared__ uint8_t smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  uint8_t* ring = smem + warp * kStages * kStageBytes;
  const int first = static_cast<int>(int64_t{blockIdx.x} * kTiles / gridDim.x);
  const int last = static_cast<int>(int64_t{blockIdx.x + 1} * kTiles / gridDim.x);
  const int n = last - first;
  const int items = warp < n ? (n - warp + kWarps - 1) / kWarps : 0;
  const int steps = items * kPasses;
  auto issue = [&](int step) {
    if (step < steps) {
      const int i = warp + (step / kPasses) * kWarps, p = step % kPasses;
      const uint8_t *code, *scale;
      int64_t up_code, up_scale;
      PassBases<kPanel>(codes, scales, first, n, i, p, code, scale, up_code, up_scale);
      uint8_t* stage = ring + (step % kStages) * kStageBytes;
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        Copy(stage + (j * 32 + lane) * 16, code + j * 512 + lane * 16, 16);
        Copy(stage + ((2 + j) * 32 + lane) * 16, code + up_code + j * 512 + lane * 16, 16);
      }
      // Each lane copies 4 of the 128 scale bytes of each half (2 quads x 64 bytes).
      Copy(stage + 2048 + lane * 4, scale + lane * 4, 4);
      Copy(stage + 2048 + 128 + lane * 4, scale + up_scale + lane * 4, 4);
    }
    asm volatile("cp.async.commit_group;\n");
  };
  for (int s = 0; s < kStages - 1; ++s) issue(s);
  uint32_t acc = 0;
  for (int step = 0; step < steps; ++step) {
    issue(step + kStages - 1);
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 1));
    const uint8_t* stage = ring + (step % kStages) * kStageBytes;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint4 v = reinterpret_cast<const uint4*>(stage)[k * 32 + lane];
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    acc ^= reinterpret_cast<const uint32_t*>(stage + 2048)[lane] ^
           reinterpret_cast<const uint32_t*>(stage + 2048 + 128)[lane];
  }
  asm volatile("cp.async.wait_group 0;\n");
  for (int o = 16; o > 0; o /= 2) acc ^= __shfl_xor_sync(0xFFFFFFFFu, acc, o);
  if (lane == 0) atomicXor(&g_xor, acc);
}

struct Result {
  const char* name;
  float warm_us, warm_spread, cold_us;
  uint32_t xor_value;
};

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int64_t code_total = kExperts * kCodeBytes, scale_total = kExperts * kScaleBytes;
  uint8_t *codes, *scales, *flush;
  const size_t flush_bytes = size_t{256} << 20;
  CHECK(cudaMalloc(&codes, code_total));
  CHECK(cudaMalloc(&scales, scale_total));
  CHECK(cudaMalloc(&flush, flush_bytes));
  {
    std::vector<uint32_t> host(code_total / 4);
    uint32_t x = 12345;
    for (auto& w : host) w = x = x * 1664525u + 1013904223u;
    CHECK(cudaMemcpy(codes, host.data(), code_total, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(scales, host.data() + 7, scale_total, cudaMemcpyHostToDevice));
  }
  const int ring3 = kWarps * 3 * kStageBytes, ring4 = kWarps * 4 * kStageBytes;
  CHECK(cudaFuncSetAttribute(Ring<false, 3>, cudaFuncAttributeMaxDynamicSharedMemorySize, ring3));
  CHECK(cudaFuncSetAttribute(Ring<true, 3>, cudaFuncAttributeMaxDynamicSharedMemorySize, ring3));
  CHECK(cudaFuncSetAttribute(Ring<false, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, ring4));
  CHECK(cudaFuncSetAttribute(Ring<true, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, ring4));
  struct Variant {
    const char* name;
    void (*launch)(const uint8_t*, const uint8_t*, int);
  };
  const Variant variants[] = {
      {"sweep", [](const uint8_t* c, const uint8_t* s, int n) {
         Sweep<<<4 * n, 512>>>(reinterpret_cast<const uint4*>(c), kExperts * kCodeBytes / 16,
                               reinterpret_cast<const uint4*>(s), kExperts * kScaleBytes / 16);
       }},
      {"streams-3", [](const uint8_t* c, const uint8_t* s, int n) {
         Ring<false, 3><<<n, kWarps * 32, kWarps * 3 * kStageBytes>>>(c, s);
       }},
      {"panels-3", [](const uint8_t* c, const uint8_t* s, int n) {
         Ring<true, 3><<<n, kWarps * 32, kWarps * 3 * kStageBytes>>>(c, s);
       }},
      {"streams-4", [](const uint8_t* c, const uint8_t* s, int n) {
         Ring<false, 4><<<n, kWarps * 32, kWarps * 4 * kStageBytes>>>(c, s);
       }},
      {"panels-4", [](const uint8_t* c, const uint8_t* s, int n) {
         Ring<true, 4><<<n, kWarps * 32, kWarps * 4 * kStageBytes>>>(c, s);
       }},
  };
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const double bytes = double(code_total + scale_total);
  std::vector<Result> results;
  for (int round = 0; round < 2; ++round) {
    for (const Variant& v : variants) {
      // The XOR of every word read, from one launch.
      uint32_t zero = 0, x = 0;
      CHECK(cudaMemcpyToSymbol(g_xor, &zero, 4));
      v.launch(codes, scales, sms);
      CHECK(cudaGetLastError());
      CHECK(cudaMemcpyFromSymbol(&x, g_xor, 4));
      // Warm: 20 samples of 10 back-to-back launches (as the probe's graph samples), after 3.
      for (int w = 0; w < 3; ++w) v.launch(codes, scales, sms);
      std::vector<float> warm, cold;
      for (int r = 0; r < 20; ++r) {
        CHECK(cudaEventRecord(a));
        for (int k = 0; k < 10; ++k) v.launch(codes, scales, sms);
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        warm.push_back(ms * 100.0f);  // us per launch
      }
      // Cold: one launch after 256 MB of writes have pushed everything out of the L2.
      for (int r = 0; r < 20; ++r) {
        CHECK(cudaMemsetAsync(flush, r, flush_bytes));
        CHECK(cudaEventRecord(a));
        v.launch(codes, scales, sms);
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        cold.push_back(ms * 1000.0f);
      }
      CHECK(cudaGetLastError());
      std::sort(warm.begin(), warm.end());
      std::sort(cold.begin(), cold.end());
      results.push_back({v.name, warm[10], (warm.back() - warm.front()) / warm[10], cold[10], x});
    }
  }
  printf("variant\twarm_us\twarm_TBps\twarm_spread\tcold_us\tcold_TBps\txor\n");
  for (const Result& r : results) {
    printf("%s\t%.2f\t%.3f\t%.3f\t%.2f\t%.3f\t%08x\n", r.name, r.warm_us, bytes / r.warm_us / 1e6,
           r.warm_spread, r.cold_us, bytes / r.cold_us / 1e6, r.xor_value);
  }
  return 0;
}
