// LaunchToSelLayout (kernels/moe_sel_kernels.h): a bank's checkpoint layout rewritten in the sel
// layout once, when the banks are loaded.
#include <cuda_runtime.h>

#include <cstdint>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "kernels/cuda_status.h"
#include "kernels/moe_sel_kernels.h"
#include "kernels/nvfp4_pack.h"
#include "kernels/sel/device_query.h"
#include "kernels/sel/preconditions.h"
#include "kernels/sel/tuning.h"

namespace gpuprobe {
namespace {

using sel::kChunkElements;

// One thread per (expert, row, chunk): its 16 code bytes, bit-permuted, and its 2 scale bytes,
// to their sel-layout places in `bands`.
__global__ void ToSelLayoutKernel(DeviceNvfp4Bank checkpoint, SelBands bands, uint8_t* sel_codes,
                                  uint8_t* sel_scales) {
  const int chunks = checkpoint.cols / kChunkElements;
  const int64_t per_expert = int64_t{checkpoint.rows} * chunks;
  const int64_t total = per_expert * checkpoint.experts;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t expert = i / per_expert;
    const int64_t row = (i % per_expert) / chunks;
    const int q = static_cast<int>(i % chunks);
    const int64_t to = expert * per_expert + SelChunkIndex(row, q, chunks, bands);
    const uint4 code = reinterpret_cast<const uint4*>(checkpoint.codes)[i];
    reinterpret_cast<uint4*>(sel_codes)[to] = make_uint4(ToSelLayout(code.x), ToSelLayout(code.y),
                                                         ToSelLayout(code.z), ToSelLayout(code.w));
    reinterpret_cast<uint16_t*>(
        sel_scales)[expert * per_expert + SelScaleIndex(row, q, chunks, bands)] =
        reinterpret_cast<const uint16_t*>(checkpoint.scales)[i];
  }
}

}  // namespace

absl::Status LaunchToSelLayout(const DeviceNvfp4Bank& checkpoint, SelBank bank, uint8_t* sel_codes,
                               uint8_t* sel_scales, cudaStream_t stream) {
  RETURN_IF_ERROR(sel::CheckBank("sel layout", checkpoint));
  const SelBands bands = bank == SelBank::kGateUp ? SelGateUpBands(checkpoint.rows) : kSelDownBands;
  // Whole bands: a gate+up bank's halves are whole octets, a down bank's rows whole bands.
  const int rows_multiple = bank == SelBank::kGateUp ? 16 : 8 * bands.octets;
  if (sel_codes == nullptr || sel_scales == nullptr ||
      reinterpret_cast<uintptr_t>(sel_codes) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(sel_scales) % 16 != 0 || checkpoint.rows % rows_multiple != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "sel layout: rows (%d) must be a multiple of %d and the sel buffers aligned like the "
        "bank's",
        checkpoint.rows, rows_multiple));
  }
  int device = 0;
  CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  ASSIGN_OR_RETURN(const sel::SelDevice card, sel::QuerySelDevice(device));
  // A grid-stride loop: four blocks per SM keep the copy at the card's bandwidth.
  ToSelLayoutKernel<<<4 * card.sms, 256, 0, stream>>>(checkpoint, bands, sel_codes, sel_scales);
  CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

}  // namespace gpuprobe
