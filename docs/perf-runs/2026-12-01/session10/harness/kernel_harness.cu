// Lever table rows 65-75: the sel kernels, the read floor and row 64's bench kernel (`Ring`, the
// kernels' reads of the union-60 gate+up bytes with their deal and ring) timed in one process by
// one method, so that the kernels are compared with the bench and the floor outside the daemon.
// The kernels are the project's own (kernels/*.cu as committed, or moe_sel_kernels.cu with one of
// this folder's patches); the banks hold random bytes (timing only: nothing is checked but that
// every launch is accepted). Random block scales put the gate+up outputs where IEEE expf and
// division take their slow paths, so math that depends on the data times differently here than
// on the daemon's banks (row 70); reads, copies and their placement time as in the daemon (rows
// 65-68). The down and union arms joined at row 68: earlier runs lack them.
//
// Arms (t = 6, selected 10, union 60 of a 512-expert bank, hidden 2560, ff 640):
//   floor         LaunchReadFloor over the 60 routed experts' gate+up bytes;
//   sel           LaunchSelGuSilu, per-slot groups, the 60 experts a seeded draw of the 512;
//   sel-contig    the same with experts 0-59 in order (the bytes Ring reads);
//   sel-u10       (from row 98) per-slot groups at union 10: every token routed to the same 10 of
//                 the drawn experts, most reads served by the L2;
//   down, floor-down  LaunchSelDown per-slot over the 60 drawn experts, and the floor over their
//                 down bytes;
//   union10-gu, union10-down  the union variant (UnionGroups) at union 10: every token routed to
//                 the same 10 of the drawn experts;
//   ring-base-wN  row 63's bench kernel (19 warps, 3-pass ring, static deal), N rounds of FMA
//                 chains a pass;
//   ring-all-wN   row 64's `all`: the kernels' copy forms and their start (group data, two
//                 input rows staged with their maxima and conversion);
//   ring-*+B      the same with the ring B bytes past a 128-byte line of shared memory (the
//                 plain names: on a line).
// Each arm's sample is one CUDA graph of 10 launches between two event records inside it (as
// the daemon's warm graph timing) or, `stream`, 10 stream launches between two events; reps
// interleave the arms (as the daemon's sweeps), 3 warm-up reps, then 20. Prints a TSV on stdout:
// build, arm, mode, median, min, max (us per launch), spread ((max - min) / median).
// With HARNESS_LEAD=1 (row 89) each sample first runs one launch of its arm outside the events,
// so that every timed launch follows a launch of its own kernel, not the previous arm's.
// With HARNESS_TIMELINE=FILE, builds made with session11/harness/tl*.patch or mk*.patch (which
// define SetSelTimeline) then run each sel arm's graph once more with every warp recording its
// events, and write the last launch's records to FILE: build, arm, block, smid, warp, t0 (ns),
// then in ns after t0 (-1: not reached) tl*'s five events (row 90: the prologue's start and end,
// the inputs staged, the first item's end, the loop's end) or mk*'s nine marks (row 94).
// With HARNESS_GLOBAL=G (row 118) every expert's gate and up global scales are G instead of 1, so
// that gate+up outputs can be brought to the magnitudes of the daemon's banks (G = 2^-17: gates of
// a few units to tens), where the SiLU takes no slow path.
// usage: [HARNESS_LEAD=1] [HARNESS_TIMELINE=FILE] [HARNESS_GLOBAL=G] kernel_harness BUILD_LABEL
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/moe_sel_kernels.h"
#include "kernels/read_floor.h"
#include "kernels/slot_groups.h"

#define CHECK(x)                                                                         \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)
#define CHECK_OK(x)                                                            \
  do {                                                                         \
    absl::Status s_ = (x);                                                     \
    if (!s_.ok()) {                                                            \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, s_.ToString().c_str()); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

namespace {

constexpr int kExperts = 512, kHidden = 2560, kFf = 640, kSelected = 10, kTokens = 6;
constexpr int kSlots = kTokens * kSelected;
constexpr int64_t kCodeBytes = int64_t{2 * kFf} * kHidden / 2;    // 1,638,400 per expert
constexpr int64_t kScaleBytes = int64_t{2 * kFf} * kHidden / 16;  // 204,800 per expert
constexpr int64_t kDownCodeBytes = int64_t{kHidden} * kFf / 2;     // 819,200 per expert
constexpr int64_t kDownScaleBytes = int64_t{kHidden} * kFf / 16;   // 102,400 per expert
constexpr int kLaunches = 10, kWarmReps = 3, kReps = 20;

__global__ void Fill(uint32_t* p, int64_t words, uint32_t seed, uint32_t mask) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < words;
       i += int64_t{gridDim.x} * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    p[i] = x & mask;
  }
}

// ---- Row 63/64's bench kernel, as committed in session9/copy-forms/copy_forms_bench.cu (its
// base and all variants only).
constexpr int kOctetCode = 10240, kOctetScale = 1280;
constexpr int kTilesPerExpert = 80, kPasses = 10;
constexpr int kRingTiles = kSlots * kTilesPerExpert;
constexpr int kStageBytes = 2048 + 256;
constexpr int kWarps = 19, kStages = 3;
constexpr int kInputRows = 2;
constexpr int kStartupBytes = kInputRows * kHidden * 4;

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

__device__ uint32_t g_xor;
__device__ float g_sink;

// kAll: src-size copies, wide scale copies and the kernels' start; else row 63's base. The ring
// starts kMisalign bytes past a 128-byte line of shared memory (row 64's variants had it at 0 or
// 16 bytes past, depending on their static shared memory and staged rows).
template <bool kAll, int kMisalign>
__global__ void __launch_bounds__(kWarps * 32, 1)
    Ring(const uint8_t* codes, const uint8_t* scales, const int* group, const float* inputs,
         int work) {
  extern __shared__ uint8_t smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* staged = reinterpret_cast<float*>(smem);
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t before = kAll ? kStartupBytes + 16 : 0;
  uint8_t* ring = smem + (((base + before + 127) & ~127u) - base) + kMisalign +
                  warp * kStages * kStageBytes;
  const int first = static_cast<int>(int64_t{blockIdx.x} * kRingTiles / gridDim.x);
  const int last = static_cast<int>(int64_t{blockIdx.x + 1} * kRingTiles / gridDim.x);
  int issued = 0, tile = first + warp, pass = 0;
  __shared__ int block_group;
  if (kAll) {  // the group data: two dependent loads, then a barrier
    if (threadIdx.x == 0) block_group = group[group[blockIdx.x % 64] % 64];
    __syncthreads();
    if (block_group < 0) tile = last;  // never: keeps the loads
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
        Copy<kAll>(stage + (j * 32 + lane) * 16, code + j * 512 + lane * 16, 16);
        Copy<kAll>(stage + ((2 + j) * 32 + lane) * 16, code + up_code + j * 512 + lane * 16, 16);
      }
      if (kAll) {  // 16 lanes copy the pass's 2 x 128 scale bytes 16 bytes each
        if (lane < 16) {
          Copy<kAll>(stage + 2048 + lane * 16,
                     (lane < 8 ? scale : scale + up_scale) + (lane % 8) * 16, 16);
        }
      } else {
        Copy<kAll>(stage + 2048 + lane * 4, scale + lane * 4, 4);
        Copy<kAll>(stage + 2048 + 128 + lane * 4, scale + up_scale + lane * 4, 4);
      }
      ++pass;
      ++issued;
    }
    asm volatile("cp.async.commit_group;\n");
  };
  if (kAll) {
    for (int i = threadIdx.x; i < kInputRows * kHidden / 4; i += blockDim.x) {
      Copy<kAll>(staged + 4 * i, inputs + (blockIdx.x % 6) * kHidden + 4 * i, 16);
    }
    asm volatile("cp.async.commit_group;\n");
  }
  for (int s = 0; s < kStages - 1; ++s) issue();
  if (kAll) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 1));
    __syncthreads();
    __shared__ unsigned row_max[kInputRows];
    if (threadIdx.x < kInputRows) row_max[threadIdx.x] = 0;
    __syncthreads();
    const int warps_per_row = kWarps / kInputRows;
    const int row = warp / warps_per_row, part = warp % warps_per_row;
    if (row < kInputRows) {
      unsigned m = 0;
      for (int i = part * 32 + lane; i < kHidden; i += warps_per_row * 32) {
        m = max(m, __float_as_uint(fabsf(staged[row * kHidden + i])));
      }
      m = __reduce_max_sync(0xFFFFFFFFu, m);
      if (lane == 0) atomicMax(&row_max[row], m);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < kInputRows * kHidden; i += blockDim.x) {
      staged[i] = staged[i] / __uint_as_float(row_max[i / kHidden] | 1u);
    }
    __syncthreads();
  }
  uint32_t acc = 0;
  float f0 = lane, f1 = lane + 1, f2 = lane + 2, f3 = lane + 3;
  for (int step = 0; step < issued; ++step) {
    if (kAll) __syncwarp();
    issue();
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 1));
    if (kAll) __syncwarp();
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
}

struct Arm {
  std::string name;
  std::function<void(cudaStream_t)> launch;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  std::vector<float> graph_us, stream_us;
};

}  // namespace

namespace gpuprobe {
// Defined only by the timeline builds (row 90).
void SetSelTimeline(uint32_t* records) __attribute__((weak));
}  // namespace gpuprobe

namespace {

float Median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuprobe;
  const std::string build = argc > 1 ? argv[1] : "base";
  const char* lead_env = std::getenv("HARNESS_LEAD");
  const bool lead = lead_env != nullptr && std::atoi(lead_env) > 0;
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  uint8_t *codes, *scales;
  CHECK(cudaMalloc(&codes, kExperts * kCodeBytes));
  CHECK(cudaMalloc(&scales, kExperts * kScaleBytes));
  Fill<<<1024, 256>>>(reinterpret_cast<uint32_t*>(codes), kExperts * kCodeBytes / 4, 1u,
                      0xFFFFFFFFu);
  // e4m3 bytes below 0x78 in every lane of the word: finite scales.
  Fill<<<1024, 256>>>(reinterpret_cast<uint32_t*>(scales), kExperts * kScaleBytes / 4, 2u,
                      0x77777777u);
  uint8_t *down_codes, *down_scales;
  CHECK(cudaMalloc(&down_codes, kExperts * kDownCodeBytes));
  CHECK(cudaMalloc(&down_scales, kExperts * kDownScaleBytes));
  Fill<<<1024, 256>>>(reinterpret_cast<uint32_t*>(down_codes), kExperts * kDownCodeBytes / 4, 3u,
                      0xFFFFFFFFu);
  Fill<<<1024, 256>>>(reinterpret_cast<uint32_t*>(down_scales), kExperts * kDownScaleBytes / 4,
                      4u, 0x77777777u);
  float *gate_global, *up_global, *x, *h, *h_in, *y;
  CHECK(cudaMalloc(&gate_global, kExperts * 4));
  CHECK(cudaMalloc(&up_global, kExperts * 4));
  CHECK(cudaMalloc(&x, kTokens * kHidden * 4));
  CHECK(cudaMalloc(&h, kSlots * kFf * 4));
  CHECK(cudaMalloc(&h_in, kSlots * kFf * 4));
  CHECK(cudaMalloc(&y, kSlots * kHidden * 4));
  Fill<<<64, 256>>>(reinterpret_cast<uint32_t*>(h_in), kSlots * kFf, 5u, 0x3F7FFFFFu);
  {
    const char* global_env = std::getenv("HARNESS_GLOBAL");
    const float global = global_env != nullptr ? std::strtof(global_env, nullptr) : 1.0f;
    std::vector<float> globals(kExperts, global), in(kTokens * kHidden);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 97) - 48.0f;
    CHECK(cudaMemcpy(gate_global, globals.data(), kExperts * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(up_global, globals.data(), kExperts * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(x, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
  }
  // Routing: 60 distinct experts (a seeded draw), and experts 0-59 in order.
  std::vector<int32_t> drawn(kExperts), contig(kSlots), union10(kSlots);
  for (int e = 0; e < kExperts; ++e) drawn[e] = e;
  std::shuffle(drawn.begin(), drawn.end(), std::mt19937(20261201));
  drawn.resize(kSlots);
  for (int s = 0; s < kSlots; ++s) {
    contig[s] = s;
    union10[s] = drawn[s % kSelected];
  }
  struct Routing {
    int32_t *sel, *expert, *table;
    DeviceSlotGroups groups;
  };
  auto route = [&](const std::vector<int32_t>& sel, bool union_plan) {
    const SlotGroups plan = union_plan ? UnionGroups(sel) : PerSlotGroups(sel);
    const std::vector<int32_t> table = SlotTable(plan);
    Routing r;
    CHECK(cudaMalloc(&r.sel, sel.size() * 4));
    CHECK(cudaMalloc(&r.expert, plan.expert.size() * 4));
    CHECK(cudaMalloc(&r.table, table.size() * 4));
    CHECK(cudaMemcpy(r.sel, sel.data(), sel.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(r.expert, plan.expert.data(), plan.expert.size() * 4,
                     cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(r.table, table.data(), table.size() * 4, cudaMemcpyHostToDevice));
    r.groups = {.expert = r.expert,
                .slot_table = r.table,
                .groups = plan.groups(),
                .max_group_slots = plan.max_group_slots,
                .slots_total = static_cast<int>(sel.size()),
                .slots_are_groups = SlotsAreGroups(plan),
                .distinct_experts = DistinctExperts(plan)};
    return r;
  };
  const Routing routed = route(drawn, false), in_order = route(contig, false),
                union_routed = route(union10, true);
  auto sel_args = [&](const Routing& r) {
    SelGuSiluArgs a;
    a.gate_up = {.codes = codes, .scales = scales, .experts = kExperts, .rows = 2 * kFf,
                 .cols = kHidden};
    a.gate_global = gate_global;
    a.up_global = up_global;
    a.x = x;
    a.selected = kSelected;
    a.groups = r.groups;
    a.h = h;
    return a;
  };
  const Routing per_slot_u10 = route(union10, false);
  const SelGuSiluArgs sel = sel_args(routed), sel_contig = sel_args(in_order),
                      union_gu = sel_args(union_routed), sel_u10 = sel_args(per_slot_u10);
  auto down_args = [&](const Routing& r) {
    SelDownArgs a;
    a.down = {.codes = down_codes, .scales = down_scales, .experts = kExperts, .rows = kHidden,
              .cols = kFf};
    a.down_global = gate_global;
    a.h = h_in;
    a.groups = r.groups;
    a.y = y;
    return a;
  };
  const SelDownArgs down = down_args(routed), union_down = down_args(union_routed);
  uint32_t* partials;
  CHECK(cudaMalloc(&partials, kFloorBlocksPerSm * sms * 4));
  ReadFloorArgs floor{};
  floor.regions[0] = {.base = codes, .expert_stride_bytes = kCodeBytes, .bytes = kCodeBytes};
  floor.regions[1] = {.base = scales, .expert_stride_bytes = kScaleBytes, .bytes = kScaleBytes};
  floor.sel = routed.sel;
  floor.slots = kSlots;
  floor.blocks = kFloorBlocksPerSm * sms;
  floor.partials = partials;
  ReadFloorArgs floor_down = floor;
  floor_down.regions[0] = {.base = down_codes, .expert_stride_bytes = kDownCodeBytes,
                           .bytes = kDownCodeBytes};
  floor_down.regions[1] = {.base = down_scales, .expert_stride_bytes = kDownScaleBytes,
                           .bytes = kDownScaleBytes};
  int* group;
  CHECK(cudaMalloc(&group, 64 * 4));
  {
    std::vector<int> g(64);
    for (int i = 0; i < 64; ++i) g[i] = (i * 7 + 3) % 64;
    CHECK(cudaMemcpy(group, g.data(), 64 * 4, cudaMemcpyHostToDevice));
  }
  const int ring_base_smem = kWarps * kStages * kStageBytes + 256;
  const int ring_all_smem = kStartupBytes + 16 + ring_base_smem;

  std::vector<Arm> arms;
  arms.push_back({"floor", [&](cudaStream_t s) { CHECK_OK(LaunchReadFloor(floor, s)); }});
  arms.push_back({"sel", [&](cudaStream_t s) { CHECK_OK(LaunchSelGuSilu(sel, s)); }});
  arms.push_back(
      {"sel-contig", [&](cudaStream_t s) { CHECK_OK(LaunchSelGuSilu(sel_contig, s)); }});
  arms.push_back({"sel-u10", [&](cudaStream_t s) { CHECK_OK(LaunchSelGuSilu(sel_u10, s)); }});
  arms.push_back({"floor-down", [&](cudaStream_t s) { CHECK_OK(LaunchReadFloor(floor_down, s)); }});
  arms.push_back({"down", [&](cudaStream_t s) { CHECK_OK(LaunchSelDown(down, s)); }});
  arms.push_back({"union10-gu", [&](cudaStream_t s) { CHECK_OK(LaunchSelGuSilu(union_gu, s)); }});
  arms.push_back({"union10-down", [&](cudaStream_t s) { CHECK_OK(LaunchSelDown(union_down, s)); }});
  auto add_ring = [&](auto kernel, const std::string& name, int smem) {
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    for (int work : {0, 40}) {
      arms.push_back({name + "-w" + std::to_string(work), [&, kernel, smem, work](cudaStream_t s) {
                        kernel<<<sms, kWarps * 32, smem, s>>>(codes, scales, group, x, work);
                      }});
    }
  };
  add_ring(Ring<false, 0>, "ring-base", ring_base_smem);
  add_ring(Ring<false, 16>, "ring-base+16", ring_base_smem);
  add_ring(Ring<false, 64>, "ring-base+64", ring_base_smem);
  add_ring(Ring<false, 128>, "ring-base+128", ring_base_smem);
  add_ring(Ring<true, 0>, "ring-all", ring_all_smem);
  add_ring(Ring<true, 64>, "ring-all+64", ring_all_smem);
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (Arm& arm : arms) {
    CHECK(cudaEventCreate(&arm.start));
    CHECK(cudaEventCreate(&arm.stop));
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    if (lead) arm.launch(stream);
    CHECK(cudaEventRecordWithFlags(arm.start, stream, cudaEventRecordExternal));
    for (int k = 0; k < kLaunches; ++k) arm.launch(stream);
    CHECK(cudaEventRecordWithFlags(arm.stop, stream, cudaEventRecordExternal));
    cudaGraph_t g;
    CHECK(cudaStreamEndCapture(stream, &g));
    CHECK(cudaGraphInstantiate(&arm.exec, g, 0));
    CHECK(cudaGraphDestroy(g));
  }
  for (int rep = 0; rep < kWarmReps + kReps; ++rep) {
    for (Arm& arm : arms) {  // graph
      CHECK(cudaGraphLaunch(arm.exec, stream));
      CHECK(cudaStreamSynchronize(stream));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, arm.start, arm.stop));
      if (rep >= kWarmReps) arm.graph_us.push_back(ms * 1000.0f / kLaunches);
    }
    for (Arm& arm : arms) {  // stream
      if (lead) arm.launch(stream);
      CHECK(cudaEventRecord(arm.start, stream));
      for (int k = 0; k < kLaunches; ++k) arm.launch(stream);
      CHECK(cudaEventRecord(arm.stop, stream));
      CHECK(cudaEventSynchronize(arm.stop));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, arm.start, arm.stop));
      if (rep >= kWarmReps) arm.stream_us.push_back(ms * 1000.0f / kLaunches);
    }
  }
  CHECK(cudaDeviceSynchronize());
  if (const char* timeline_file = std::getenv("HARNESS_TIMELINE");
      timeline_file != nullptr && SetSelTimeline != nullptr) {
    // Records of 8 words a warp (tl*.patch, row 90) or 16 (mk*.patch, row 94: ten marks).
    constexpr int kWords = 16;
    const size_t words = size_t{static_cast<size_t>(sms)} * 32 * kWords;
    uint32_t* records;
    CHECK(cudaMalloc(&records, words * 4));
    std::vector<uint32_t> host(words);
    FILE* f = std::fopen(timeline_file, "w");
    CHECK(f != nullptr ? cudaSuccess : cudaErrorUnknown);
    for (Arm& arm : arms) {
      if (arm.name != "sel" && arm.name != "down" && arm.name.rfind("union10", 0) != 0) continue;
      CHECK(cudaMemset(records, 0, words * 4));
      SetSelTimeline(records);
      CHECK(cudaGraphLaunch(arm.exec, stream));
      CHECK(cudaStreamSynchronize(stream));
      SetSelTimeline(nullptr);
      CHECK(cudaMemcpy(host.data(), records, words * 4, cudaMemcpyDeviceToHost));
      const bool marks = (host[0] >> 16) == 0x7A5Fu;
      for (size_t w = 0; marks && w < words; w += 16) {
        const uint32_t* r = &host[w];
        if ((r[0] >> 16) != 0x7A5Fu) continue;
        std::fprintf(f, "%s\t%s\t%u\t%u\t%u\t%u", build.c_str(), arm.name.c_str(),
                     r[1] & 0xFFFFu, r[1] >> 16, r[0] & 0xFFFFu, r[2]);
        for (int k = 1; k < 10; ++k) {
          std::fprintf(f, "\t%d", r[2 + k] == 0 ? -1 : static_cast<int>(r[2 + k] - r[2]));
        }
        std::fprintf(f, "\n");
      }
      for (size_t w = 0; !marks && w < words; w += 8) {
        const uint32_t* r = &host[w];
        if ((r[0] >> 16) != 0x7A5Eu) continue;
        std::fprintf(f, "%s\t%s\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\n", build.c_str(),
                     arm.name.c_str(), r[1] & 0xFFFFu, r[1] >> 16, r[0] & 0xFFFFu, r[2],
                     8 * (r[3] & 0xFFFFu), 8 * (r[3] >> 16), 8 * (r[4] & 0xFFFFu),
                     8 * (r[4] >> 16), 8 * r[5]);
      }
    }
    std::fclose(f);
    CHECK(cudaFree(records));
  }
  printf("build\tarm\tmode\tmedian_us\tmin_us\tmax_us\tspread\n");
  for (const Arm& arm : arms) {
    for (const auto& [mode, v] : {std::pair{"graph", &arm.graph_us}, {"stream", &arm.stream_us}}) {
      const float med = Median(*v);
      const auto [lo, hi] = std::minmax_element(v->begin(), v->end());
      printf("%s\t%s\t%s\t%.2f\t%.2f\t%.2f\t%.3f\n", build.c_str(), arm.name.c_str(), mode, med,
             *lo, *hi, (*hi - *lo) / med);
    }
  }
  return 0;
}
