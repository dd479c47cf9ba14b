// The CUDA driver functions the kernel probe calls (modules, their functions and parameter
// layouts, the linker, launches with cluster dimensions), found through the runtime
// (cudaGetDriverEntryPointByVersion): gpuprobed links no libcuda, so it starts where there is no
// driver (the cpu backend).
//
//   ASSIGN_OR_RETURN(const CudaDriver* cu, CudaDriver::Get());
//   RETURN_IF_ERROR(cu->Status(cu->ModuleLoadData(&module, image.data()), "cuModuleLoadData"));
#pragma once

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpuprobe {

struct CudaDriver {
  decltype(&::cuGetErrorName) GetErrorName;
  decltype(&::cuGetErrorString) GetErrorString;
  decltype(&::cuModuleLoadData) ModuleLoadData;
  decltype(&::cuModuleUnload) ModuleUnload;
  decltype(&::cuModuleGetFunction) ModuleGetFunction;
  decltype(&::cuFuncGetParamInfo) FuncGetParamInfo;
  decltype(&::cuFuncSetAttribute) FuncSetAttribute;
  decltype(&::cuLaunchKernelEx) LaunchKernelEx;
  decltype(&::cuLinkCreate) LinkCreate;
  decltype(&::cuLinkAddData) LinkAddData;
  decltype(&::cuLinkComplete) LinkComplete;
  decltype(&::cuLinkDestroy) LinkDestroy;

  // Found once; UNAVAILABLE naming the function the driver lacks (older than CUDA 12.4).
  static absl::StatusOr<const CudaDriver*> Get();

  // `result` as a status naming `call`: INVALID_ARGUMENT for what the request got wrong (a
  // module the driver refuses, a launch configuration the kernel cannot take), RESOURCE_EXHAUSTED
  // for memory, INTERNAL otherwise (the context may be unusable).
  absl::Status Status(CUresult result, const char* call) const;
};

}  // namespace gpuprobe
