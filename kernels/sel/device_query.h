// The card's properties that shape a sel launch (kernels/sel/launch_plan.h), read from the
// device rather than assumed.
//
//   ASSIGN_OR_RETURN(const sel::SelDevice card, sel::QuerySelDevice(device));
#pragma once

#include <cuda_runtime_api.h>

#include "absl/status/statusor.h"
#include "kernels/cuda_status.h"
#include "kernels/sel/launch_plan.h"

namespace gpuprobe::sel {

inline absl::StatusOr<SelDevice> QuerySelDevice(int device) {
  int sms = 0, l2_bytes = 0, max_smem_bytes = 0;
  CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&max_smem_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return SelDevice{.sms = sms, .l2_bytes = l2_bytes, .max_smem_bytes = max_smem_bytes};
}

}  // namespace gpuprobe::sel
