// Turns CUDA runtime errors into absl::Status values that name the call, the file and the line.
//
//   CUDA_RETURN_IF_ERROR(cudaMalloc(&ptr, bytes));
//   CUDA_RETURN_IF_ERROR(cudaGetLastError());  // after every launch
#pragma once

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace gpuprobe {

inline absl::Status CudaStatus(cudaError_t error, const char* call, const char* file, int line) {
  if (error == cudaSuccess) return absl::OkStatus();
  // Errors that leave the context unusable are INTERNAL; the others (bad arguments, out of
  // memory) keep their meaning.
  const absl::StatusCode code =
      error == cudaErrorMemoryAllocation ? absl::StatusCode::kResourceExhausted
      : error == cudaErrorInvalidValue   ? absl::StatusCode::kInvalidArgument
      : error == cudaErrorNoDevice       ? absl::StatusCode::kUnavailable
                                         : absl::StatusCode::kInternal;
  return absl::Status(code, absl::StrFormat("%s failed at %s:%d: %s (%s)", call, file, line,
                                            cudaGetErrorString(error), cudaGetErrorName(error)));
}

}  // namespace gpuprobe

#define CUDA_RETURN_IF_ERROR(call)                                     \
  do {                                                                 \
    if (absl::Status gpuprobe_cuda_status_ =                           \
            ::gpuprobe::CudaStatus((call), #call, __FILE__, __LINE__); \
        !gpuprobe_cuda_status_.ok()) {                                 \
      return gpuprobe_cuda_status_;                                    \
    }                                                                  \
  } while (false)
