// The kernel probe's buffer fill on cuda: one thread per element (grid-stride), splitmix64 of
// (seed, index) for each value, Box-Muller for the normal.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "kernels/cuda_status.h"
#include "server/probes/kernel/buffer_fill.h"

namespace gpuprobe {
namespace {

enum class Dtype { kF64, kF32, kF16, kBf16, kI64, kI32, kI16, kI8, kU64, kU32, kU16, kU8 };

__device__ uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A uniform value in (0, 1], from 53 bits.
__device__ double Unit(uint64_t bits) { return (static_cast<double>(bits >> 11) + 1.0) * 0x1p-53; }

template <typename T>
__device__ void StoreInteger(void* data, uint64_t i, double v, double lo, double hi) {
  static_cast<T*>(data)[i] = static_cast<T>(fmin(fmax(floor(v), lo), hi));
}

__device__ void Store(void* data, uint64_t i, Dtype dtype, double v) {
  switch (dtype) {
    case Dtype::kF64:
      static_cast<double*>(data)[i] = v;
      break;
    case Dtype::kF32:
      static_cast<float*>(data)[i] = static_cast<float>(v);
      break;
    case Dtype::kF16:
      static_cast<__half*>(data)[i] = __double2half(v);
      break;
    case Dtype::kBf16:
      static_cast<__nv_bfloat16*>(data)[i] = __double2bfloat16(v);
      break;
    case Dtype::kI64:
      StoreInteger<long long>(data, i, v, -9223372036854775808.0, 9223372036854774784.0);
      break;
    case Dtype::kI32:
      StoreInteger<int>(data, i, v, -2147483648.0, 2147483647.0);
      break;
    case Dtype::kI16:
      StoreInteger<short>(data, i, v, -32768.0, 32767.0);
      break;
    case Dtype::kI8:
      StoreInteger<signed char>(data, i, v, -128.0, 127.0);
      break;
    case Dtype::kU64:
      StoreInteger<unsigned long long>(data, i, v, 0.0, 18446744073709549568.0);
      break;
    case Dtype::kU32:
      StoreInteger<unsigned>(data, i, v, 0.0, 4294967295.0);
      break;
    case Dtype::kU16:
      StoreInteger<unsigned short>(data, i, v, 0.0, 65535.0);
      break;
    case Dtype::kU8:
      StoreInteger<unsigned char>(data, i, v, 0.0, 255.0);
      break;
  }
}

__global__ void FillKernel(void* data, uint64_t count, Dtype dtype, Fill fill, double a, double b,
                           uint64_t seed) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    double v = a;
    const uint64_t bits = SplitMix64(seed ^ SplitMix64(i));
    if (fill == Fill::kUniform) {
      v = a + (b - a) * (1.0 - Unit(bits));  // [a, b)
    } else if (fill == Fill::kNormal) {
      const double u1 = Unit(bits), u2 = Unit(SplitMix64(bits));
      v = a + b * sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
    }
    Store(data, i, dtype, v);
  }
}

}  // namespace

absl::Status LaunchBufferFill(void* data, uint64_t count, const std::string& dtype, Fill fill,
                              double a, double b, uint64_t seed, cudaStream_t stream) {
  static const auto* dtypes = new std::map<std::string, Dtype>{
      {"f64", Dtype::kF64}, {"f32", Dtype::kF32}, {"f16", Dtype::kF16}, {"bf16", Dtype::kBf16},
      {"i64", Dtype::kI64}, {"i32", Dtype::kI32}, {"i16", Dtype::kI16}, {"i8", Dtype::kI8},
      {"u64", Dtype::kU64}, {"u32", Dtype::kU32}, {"u16", Dtype::kU16}, {"u8", Dtype::kU8}};
  const auto found = dtypes->find(dtype);
  if (found == dtypes->end()) {
    return absl::InvalidArgumentError(absl::StrCat("dtype: \"", dtype, "\" cannot be filled"));
  }
  if (count == 0) return absl::OkStatus();
  constexpr int kThreads = 256;
  const uint64_t blocks = std::min<uint64_t>((count + kThreads - 1) / kThreads, 65536);
  FillKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(data, count, found->second,
                                                                     fill, a, b, seed);
  CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

}  // namespace gpuprobe
