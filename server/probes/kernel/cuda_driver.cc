#include "server/probes/kernel/cuda_driver.h"

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuprobe {
namespace {

template <typename F>
absl::Status Find(const char* symbol, F& function) {
  void* found = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t error =
      cudaGetDriverEntryPointByVersion(symbol, &found, CUDA_VERSION, cudaEnableDefault, &query);
  if (error != cudaSuccess || query != cudaDriverEntryPointSuccess || found == nullptr) {
    return absl::UnavailableError(absl::StrFormat(
        "the CUDA driver has no %s of CUDA %d.%d (%s): the kernel probe needs a newer driver",
        symbol, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10, cudaGetErrorString(error)));
  }
  function = reinterpret_cast<F>(found);
  return absl::OkStatus();
}

absl::StatusOr<CudaDriver> Load() {
  CudaDriver d{};
  for (absl::Status s :
       {Find("cuGetErrorName", d.GetErrorName), Find("cuGetErrorString", d.GetErrorString),
        Find("cuModuleLoadData", d.ModuleLoadData), Find("cuModuleUnload", d.ModuleUnload),
        Find("cuModuleGetFunction", d.ModuleGetFunction),
        Find("cuFuncGetParamInfo", d.FuncGetParamInfo),
        Find("cuFuncSetAttribute", d.FuncSetAttribute), Find("cuLaunchKernelEx", d.LaunchKernelEx),
        Find("cuLinkCreate", d.LinkCreate), Find("cuLinkAddData", d.LinkAddData),
        Find("cuLinkComplete", d.LinkComplete), Find("cuLinkDestroy", d.LinkDestroy)}) {
    if (!s.ok()) return s;
  }
  return d;
}

}  // namespace

absl::StatusOr<const CudaDriver*> CudaDriver::Get() {
  static const absl::StatusOr<CudaDriver>* driver = new absl::StatusOr<CudaDriver>(Load());
  if (!driver->ok()) return driver->status();
  return &**driver;
}

absl::Status CudaDriver::Status(CUresult result, const char* call) const {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = "?";
  const char* text = "?";
  GetErrorName(result, &name);
  GetErrorString(result, &text);
  absl::StatusCode code = absl::StatusCode::kInternal;
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      code = absl::StatusCode::kResourceExhausted;
      break;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_INVALID_CLUSTER_SIZE:
    case CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND:
      code = absl::StatusCode::kInvalidArgument;
      break;
    default:
      break;
  }
  return absl::Status(code, absl::StrCat(call, ": ", text, " (", name, ")"));
}

}  // namespace gpuprobe
