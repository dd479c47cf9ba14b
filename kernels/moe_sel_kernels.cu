#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>

#include "common/status_macros.h"
#include "kernels/cuda_status.h"
#include "kernels/moe_sel_kernels.h"
#include "kernels/nvfp4_pack.h"
#include "kernels/slot_groups.h"

namespace gpuprobe {
namespace {

// 8 warps share one staging of the inputs.
constexpr int kWarpsPerBlock = 8;
constexpr int kThreads = kWarpsPerBlock * 32;
constexpr int kChunkElements = 32;
constexpr int kStepsPerChunk = 8;  // mma.m16n8k16 steps that consume a chunk
// A staged chunk is 8 steps of 16 bytes (hi pair, hi pair, lo pair, lo pair); after every
// `per_thread` chunks comes 16 bytes of padding, so that the chunks the four column threads of
// a warp read at once (q, q + per_thread, ...) start 8 * per_thread + 1 vectors apart, in
// different banks.
// Measured on the H200 (docs/PERF.md): the long gate+up rows stream fastest with 2 chunks per
// thread per pass (more bytes in flight per warp; 128 registers, 2 blocks per SM), the short
// down rows with 1 chunk and 4 blocks per SM (64 registers, more warps).
template <bool kGateUpSilu>
struct Tuning {
  static constexpr int kChunksPerThread = kGateUpSilu ? 2 : 1;  // per row per pass
  static constexpr int kChunksPerPass = 4 * kChunksPerThread;   // 4 column threads per row
  static constexpr int kMinBlocksPerSm = kGateUpSilu ? 2 : 4;
};
// Above this the shared memory of a block would not fit next to a second block on an SM.
constexpr int kMaxDynamicSmemBytes = 200 * 1024;

struct SelParams {
  const uint8_t* codes;
  const uint8_t* scales;
  int64_t expert_code_bytes;
  int64_t expert_scale_bytes;
  int cols;      // K
  int out_rows;  // gu: ff (j values); down: hidden
  const float* in;
  int in_row_div;         // input row of slot s is s / in_row_div
  const float* global_a;  // gu: gate; down: down
  const float* global_b;  // gu: up; down: unused
  const int32_t* group_expert;
  const int32_t* group_begin;
  const int32_t* group_slots;
  int staged_cols;  // input rows staged per block: the plan's widest group
  float* out;       // [slots][out_rows]
};

__host__ __device__ __forceinline__ int StagedChunkOffset(int q, int per_thread) {
  return q * kStepsPerChunk + q / per_thread;
}

// 16-byte vectors of one staged input row.
__host__ __device__ __forceinline__ int StagedRowVectors(int chunks, int per_thread) {
  return StagedChunkOffset(chunks, per_thread) + 1;
}

int64_t StagedBytes(int cols, int staged_cols, int per_thread) {
  return 64 + int64_t{staged_cols} * StagedRowVectors(cols / kChunkElements, per_thread) * 16;
}

__device__ __forceinline__ uint32_t E4m3PairToHalf2(uint16_t pair) {
  uint32_t out;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(out) : "h"(pair));
  return out;
}

// Four e4m3 bytes to two f16 pairs: bytes 0-1 to `lo`, bytes 2-3 to `hi`. Unpacking the
// register into 16-bit halves in PTX lets the conversion read the upper half directly instead
// of shifting it down first.
__device__ __forceinline__ void E4m3QuadToHalf2Pair(uint32_t quad, uint32_t& lo, uint32_t& hi) {
  asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %2;\n\t"
      "cvt.rn.f16x2.e4m3x2 %0, l;\n\tcvt.rn.f16x2.e4m3x2 %1, h;\n\t}"
      : "=r"(lo), "=r"(hi)
      : "r"(quad));
}

__device__ __forceinline__ uint32_t MulHalf2(uint32_t a, uint32_t b) {
  uint32_t out;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(out) : "r"(a), "r"(b));
  return out;
}

__device__ __forceinline__ void Mma16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                         uint32_t a3, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t PackHalf2(__half lo, __half hi) {
  return static_cast<uint32_t>(__half_as_ushort(lo)) |
         (static_cast<uint32_t>(__half_as_ushort(hi)) << 16);
}

// Stages the input rows of a group in shared memory as f16 hi + lo pairs in the order the mma
// steps consume them. Each row is first scaled by a power of two so its largest magnitude is
// below 2^14 (f16 has range for it; f32 precision survives in hi + lo); out_scale[n] undoes
// that scaling and the 2^-6 of the weight decode.
template <int kPerThread>
__device__ void StageInputs(const SelParams& p, int group_begin, int ncols, uint4* staged,
                            float* out_scale, float* in_scale) {
  __shared__ float warp_max[kWarpsPerBlock][kMaxGroupSlots];
  const int chunks = p.cols / kChunkElements;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int n = 0; n < ncols; ++n) {
    const float* row = p.in + int64_t{p.group_slots[group_begin + n] / p.in_row_div} * p.cols;
    float m = 0.0f;
    for (int i = threadIdx.x; i < p.cols; i += kThreads) m = fmaxf(m, fabsf(row[i]));
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
    if (lane == 0) warp_max[warp][n] = m;
  }
  __syncthreads();
  if (threadIdx.x < ncols) {
    float m = 0.0f;
    for (int w = 0; w < kWarpsPerBlock; ++w) m = fmaxf(m, warp_max[w][threadIdx.x]);
    int exponent = 0;
    frexpf(m, &exponent);  // m < 2^exponent
    const int shift = m > 0.0f ? exponent - 14 : 0;
    out_scale[threadIdx.x] = ldexpf(kE4m3FromE2m1Scale, shift);
    in_scale[threadIdx.x] = ldexpf(1.0f, -shift);
  }
  __syncthreads();
  const int units = ncols * chunks * kStepsPerChunk;
  for (int u = threadIdx.x; u < units; u += kThreads) {
    const int step = u % kStepsPerChunk;
    const int q = (u / kStepsPerChunk) % chunks;
    const int n = u / (kStepsPerChunk * chunks);
    const float* row = p.in + int64_t{p.group_slots[group_begin + n] / p.in_row_div} * p.cols;
    __half hi[4], lo[4];
    for (int slot = 0; slot < 4; ++slot) {
      const float v = row[q * kChunkElements + ChunkElementOfStepSlot(step, slot)] * in_scale[n];
      hi[slot] = __float2half_rn(v);
      lo[slot] = __float2half_rn(v - __half2float(hi[slot]));
    }
    staged[n * StagedRowVectors(chunks, kPerThread) + StagedChunkOffset(q, kPerThread) + step] =
        make_uint4(PackHalf2(hi[0], hi[1]), PackHalf2(hi[2], hi[3]), PackHalf2(lo[0], lo[1]),
                   PackHalf2(lo[2], lo[3]));
  }
  __syncthreads();
}

// The two weight rows a thread reads: codes and block scales of rows g and g + 8.
struct RowPointers {
  const uint8_t* codes_g;
  const uint8_t* codes_g8;
  const uint8_t* scales_g;
  const uint8_t* scales_g8;
};

// One pass of one thread: chunks first_q .. first_q + kChunks - 1 of its two rows. Chunks
// past the end of the row load as zero weights (they add nothing to the dot products).
template <int kChunks>
struct PassData {
  uint4 code_a[kChunks], code_b[kChunks];
  uint32_t scale_a[kChunks], scale_b[kChunks];
};

template <int kChunks>
__device__ __forceinline__ PassData<kChunks> LoadPass(const RowPointers& r, int first_q,
                                                      int chunks) {
  PassData<kChunks> data;
#pragma unroll
  for (int j = 0; j < kChunks; ++j) {
    const int q = first_q + j;
    if (q < chunks) {
      data.code_a[j] = __ldg(reinterpret_cast<const uint4*>(r.codes_g) + q);
      data.code_b[j] = __ldg(reinterpret_cast<const uint4*>(r.codes_g8) + q);
      data.scale_a[j] = __ldg(reinterpret_cast<const uint16_t*>(r.scales_g) + q);
      data.scale_b[j] = __ldg(reinterpret_cast<const uint16_t*>(r.scales_g8) + q);
    } else {
      data.code_a[j] = data.code_b[j] = make_uint4(0, 0, 0, 0);
      data.scale_a[j] = data.scale_b[j] = 0;
    }
  }
  return data;
}

// Decodes a pass's chunks of two rows to exact f16 (code * block scale) and multiplies them
// on the tensor cores with the staged inputs, adding into d.
template <int kChunks>
__device__ __forceinline__ void ComputePass(const PassData<kChunks>& data, const uint4* b_rows,
                                            int first_q, int chunks, float (&d)[4]) {
#pragma unroll
  for (int j = 0; j < kChunks; ++j) {
    const uint4* b_chunk = b_rows + StagedChunkOffset(min(first_q + j, chunks - 1), kChunks);
    const uint32_t words_a[4] = {data.code_a[j].x, data.code_a[j].y, data.code_a[j].z,
                                 data.code_a[j].w};
    const uint32_t words_b[4] = {data.code_b[j].x, data.code_b[j].y, data.code_b[j].z,
                                 data.code_b[j].w};
    // Fresh accumulators per chunk, hi and lo apart: the tensor cores' f32 accumulation
    // truncates, so long chains into one accumulator drift (measured 1e-5 in norm over
    // K = 2560 on the H200); short chains summed with ordinary f32 adds do not. Separate
    // chains also let the chunks' mma sequences overlap.
    float hi[4] = {0.0f, 0.0f, 0.0f, 0.0f}, lo[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    // The chunk's two scale bytes (blocks 0 and 1) in one conversion, then each broadcast to
    // both halves: words 0-1 of a chunk use block 0, words 2-3 block 1.
    const uint32_t scales_a = E4m3PairToHalf2(static_cast<uint16_t>(data.scale_a[j]));
    const uint32_t scales_b = E4m3PairToHalf2(static_cast<uint16_t>(data.scale_b[j]));
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t sa = __byte_perm(scales_a, 0, i < 2 ? 0x1010 : 0x3232);
      const uint32_t sb = __byte_perm(scales_b, 0, i < 2 ? 0x1010 : 0x3232);
#pragma unroll
      for (int parity = 0; parity < 2; ++parity) {
        const uint32_t ra = parity ? OddNibblesToE4m3(words_a[i]) : EvenNibblesToE4m3(words_a[i]);
        const uint32_t rb = parity ? OddNibblesToE4m3(words_b[i]) : EvenNibblesToE4m3(words_b[i]);
        uint32_t a0, a1, a2, a3;
        E4m3QuadToHalf2Pair(ra, a0, a2);
        E4m3QuadToHalf2Pair(rb, a1, a3);
        a0 = MulHalf2(a0, sa);
        a2 = MulHalf2(a2, sa);
        a1 = MulHalf2(a1, sb);
        a3 = MulHalf2(a3, sb);
        const uint4 b = b_chunk[2 * i + parity];
        Mma16816(hi, a0, a1, a2, a3, b.x, b.y);
        Mma16816(lo, a0, a1, a2, a3, b.z, b.w);
      }
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) d[k] += hi[k] + lo[k];
  }
}

// One warp computes 16 weight rows of one group: rows (row_g, row_g8) for lane group g.
// kGateUpSilu: rows 0..7 are gate rows j0..j0+7 and rows 8..15 the matching up rows, so one
// thread ends with both gate and up of its j and fuses silu(gate) * up.
template <bool kGateUpSilu>
__global__ void __launch_bounds__(kThreads, Tuning<kGateUpSilu>::kMinBlocksPerSm)
    SelNvfp4Kernel(SelParams p) {
  constexpr int kChunks = Tuning<kGateUpSilu>::kChunksPerThread;
  constexpr int kChunksPerPass = Tuning<kGateUpSilu>::kChunksPerPass;
  // Dynamic shared memory: out_scale[8], in_scale[8] (64 bytes), then the staged inputs.
  extern __shared__ uint4 smem[];
  float* out_scale = reinterpret_cast<float*>(smem);
  float* in_scale = out_scale + kMaxGroupSlots;
  uint4* staged = smem + 4;

  const int group = blockIdx.y;
  const int begin = p.group_begin[group];
  const int ncols = p.group_begin[group + 1] - begin;
  const int expert = p.group_expert[group];
  StageInputs<kChunks>(p, begin, ncols, staged, out_scale, in_scale);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, c = lane % 4;
  const int tile = blockIdx.x * kWarpsPerBlock + warp;
  int out_row, row_g, row_g8;
  if constexpr (kGateUpSilu) {
    if (tile * 8 >= p.out_rows) return;
    out_row = tile * 8 + g;  // j
    row_g = out_row;
    row_g8 = p.out_rows + out_row;
  } else {
    if (tile * 16 >= p.out_rows) return;
    out_row = tile * 16 + g;
    row_g = out_row;
    row_g8 = out_row + 8;
  }
  const int chunks = p.cols / kChunkElements;
  const int64_t row_codes = p.cols / 2, row_scales = p.cols / kNvfp4BlockSize;
  const RowPointers rows{p.codes + expert * p.expert_code_bytes + row_g * row_codes,
                         p.codes + expert * p.expert_code_bytes + row_g8 * row_codes,
                         p.scales + expert * p.expert_scale_bytes + row_g * row_scales,
                         p.scales + expert * p.expert_scale_bytes + row_g8 * row_scales};
  // Lane group g supplies B column g: input row g of the group, or row 0 for columns past the
  // group's width (those columns are computed and never written).
  const uint4* b_rows = staged + (g < ncols ? g : 0) * StagedRowVectors(chunks, kChunks);

  // Software pipeline, two passes per iteration so the buffers swap roles without copies: the
  // next pass's codes are in flight while this pass is computed.
  const int mine = kChunks * c;  // this thread's first chunk within a pass
  float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  PassData<kChunks> even = LoadPass<kChunks>(rows, mine, chunks);
  for (int pass = 0; pass < chunks; pass += 2 * kChunksPerPass) {
    const PassData<kChunks> odd = LoadPass<kChunks>(rows, pass + kChunksPerPass + mine, chunks);
    ComputePass(even, b_rows, pass + mine, chunks, d);
    if (pass + kChunksPerPass >= chunks) break;
    even = LoadPass<kChunks>(rows, pass + 2 * kChunksPerPass + mine, chunks);
    ComputePass(odd, b_rows, pass + kChunksPerPass + mine, chunks, d);
  }

  // d[0], d[1]: row g, columns 2c and 2c+1; d[2], d[3]: row g+8, same columns.
#pragma unroll
  for (int parity = 0; parity < 2; ++parity) {
    const int n = 2 * c + parity;
    if (n >= ncols) continue;
    const int slot = p.group_slots[begin + n];
    const float scale = out_scale[n];
    if constexpr (kGateUpSilu) {
      const float gate = d[parity] * scale * p.global_a[expert];
      const float up = d[2 + parity] * scale * p.global_b[expert];
      p.out[int64_t{slot} * p.out_rows + out_row] = gate / (1.0f + expf(-gate)) * up;
    } else {
      const float global = scale * p.global_a[expert];
      p.out[int64_t{slot} * p.out_rows + out_row] = d[parity] * global;
      p.out[int64_t{slot} * p.out_rows + out_row + 8] = d[2 + parity] * global;
    }
  }
}

absl::Status CheckGroups(const DeviceSlotGroups& groups) {
  if (groups.groups < 1 || groups.groups > 65535) {
    return absl::InvalidArgumentError(
        absl::StrFormat("groups: %d is outside [1, 65535]", groups.groups));
  }
  if (groups.max_group_slots < 1 || groups.max_group_slots > kMaxGroupSlots) {
    return absl::InvalidArgumentError(absl::StrFormat("max_group_slots: %d is outside [1, %d]",
                                                      groups.max_group_slots, kMaxGroupSlots));
  }
  if (groups.expert == nullptr || groups.slot_begin == nullptr || groups.slots == nullptr) {
    return absl::InvalidArgumentError("groups: null device pointer");
  }
  return absl::OkStatus();
}

absl::Status CheckBank(const char* name, const DeviceNvfp4Bank& bank) {
  if (bank.codes == nullptr || bank.scales == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: null device pointer", name));
  }
  if (bank.cols % kChunkElements != 0 || bank.cols < kChunkElements || bank.rows < 16) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d x %d rows x cols; cols must be a positive multiple of 32, rows at least 16", name,
        bank.rows, bank.cols));
  }
  if (reinterpret_cast<uintptr_t>(bank.codes) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(bank.scales) % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: codes must be 16-byte aligned", name));
  }
  return absl::OkStatus();
}

template <bool kGateUpSilu>
absl::Status Launch(const SelParams& p, int tiles, int groups, cudaStream_t stream) {
  static std::once_flag once;
  static cudaError_t attribute_error = cudaSuccess;
  std::call_once(once, [] {
    attribute_error =
        cudaFuncSetAttribute(SelNvfp4Kernel<kGateUpSilu>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxDynamicSmemBytes);
  });
  CUDA_RETURN_IF_ERROR(attribute_error);
  const dim3 grid((tiles + kWarpsPerBlock - 1) / kWarpsPerBlock, groups);
  SelNvfp4Kernel<kGateUpSilu>
      <<<grid, kThreads, StagedBytes(p.cols, p.staged_cols, Tuning<kGateUpSilu>::kChunksPerThread),
         stream>>>(p);
  CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

}  // namespace

absl::Status CanImplementSelKernels(const MoeGeometry& g, int max_group_slots) {
  for (auto [name, cols] : {std::pair<const char*, int>{"hidden", g.hidden}, {"ff", g.ff}}) {
    if (cols % kChunkElements != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d is not a multiple of 32, which the cuda kernels' 16-byte loads need", name,
          cols));
    }
    if (std::max(StagedBytes(cols, max_group_slots, Tuning<true>::kChunksPerThread),
                 StagedBytes(cols, max_group_slots, Tuning<false>::kChunksPerThread)) >
        kMaxDynamicSmemBytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d inputs x %d slots per group do not fit the %d KiB of shared memory the "
          "cuda kernels stage inputs in",
          name, cols, max_group_slots, kMaxDynamicSmemBytes / 1024));
    }
  }
  return absl::OkStatus();
}

absl::Status LaunchSelGuSilu(const SelGuSiluArgs& a, cudaStream_t stream) {
  RETURN_IF_ERROR(CheckBank("gate_up", a.gate_up));
  RETURN_IF_ERROR(CheckGroups(a.groups));
  if (a.gate_up.rows % 16 != 0 || a.selected < 1 || a.x == nullptr || a.h == nullptr ||
      a.gate_global == nullptr || a.up_global == nullptr) {
    return absl::InvalidArgumentError(
        "sel_gu_silu: rows must be 2*ff with ff a multiple of 8, "
        "selected positive, and every pointer set");
  }
  const int ff = a.gate_up.rows / 2;
  const SelParams p{.codes = a.gate_up.codes,
                    .scales = a.gate_up.scales,
                    .expert_code_bytes = int64_t{a.gate_up.rows} * a.gate_up.cols / 2,
                    .expert_scale_bytes = int64_t{a.gate_up.rows} * a.gate_up.cols / 16,
                    .cols = a.gate_up.cols,
                    .out_rows = ff,
                    .in = a.x,
                    .in_row_div = a.selected,
                    .global_a = a.gate_global,
                    .global_b = a.up_global,
                    .group_expert = a.groups.expert,
                    .group_begin = a.groups.slot_begin,
                    .group_slots = a.groups.slots,
                    .staged_cols = a.groups.max_group_slots,
                    .out = a.h};
  return Launch<true>(p, ff / 8, a.groups.groups, stream);
}

absl::Status LaunchSelDown(const SelDownArgs& a, cudaStream_t stream) {
  RETURN_IF_ERROR(CheckBank("down", a.down));
  RETURN_IF_ERROR(CheckGroups(a.groups));
  if (a.down.rows % 16 != 0 || a.h == nullptr || a.y == nullptr || a.down_global == nullptr) {
    return absl::InvalidArgumentError(
        "sel_down: rows (hidden) must be a multiple of 16 and every pointer set");
  }
  const SelParams p{.codes = a.down.codes,
                    .scales = a.down.scales,
                    .expert_code_bytes = int64_t{a.down.rows} * a.down.cols / 2,
                    .expert_scale_bytes = int64_t{a.down.rows} * a.down.cols / 16,
                    .cols = a.down.cols,
                    .out_rows = a.down.rows,
                    .in = a.h,
                    .in_row_div = 1,
                    .global_a = a.down_global,
                    .global_b = nullptr,
                    .group_expert = a.groups.expert,
                    .group_begin = a.groups.slot_begin,
                    .group_slots = a.groups.slots,
                    .staged_cols = a.groups.max_group_slots,
                    .out = a.y};
  return Launch<false>(p, a.down.rows / 16, a.groups.groups, stream);
}

}  // namespace gpuprobe
