#include "server/device/backend_factory.h"

#include "absl/strings/str_format.h"
#include "server/device/cpu_backend.h"
#include "spdlog/spdlog.h"
#if GPUPROBE_HAVE_CUDA
#include "server/device/cuda_backend.h"
#endif

namespace gpuprobe {
namespace {

absl::StatusOr<std::unique_ptr<Backend>> MakeCuda() {
#if GPUPROBE_HAVE_CUDA
  absl::StatusOr<std::unique_ptr<CudaBackend>> cuda = CudaBackend::Create(/*device=*/0);
  if (!cuda.ok()) return cuda.status();
  return std::unique_ptr<Backend>(*std::move(cuda));
#else
  return absl::UnavailableError("this build of gpuprobed has no cuda backend");
#endif
}

}  // namespace

absl::Status CheckBackendGeometry(std::string_view name, const MoeGeometry& geometry,
                                  KernelVariant variant) {
#if GPUPROBE_HAVE_CUDA
  if (name == "cuda") return CudaBackend::CheckCudaGeometry(geometry, variant);
#endif
  (void)name;
  (void)geometry;
  (void)variant;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(std::string_view name) {
  if (name == "cpu") return std::make_unique<CpuBackend>();
  if (name == "cuda") {
    absl::StatusOr<std::unique_ptr<Backend>> cuda = MakeCuda();
    if (!cuda.ok()) {
      return absl::UnavailableError(absl::StrFormat("backend: cuda: %s", cuda.status().message()));
    }
    return cuda;
  }
  if (name == "auto") {
    absl::StatusOr<std::unique_ptr<Backend>> cuda = MakeCuda();
    if (cuda.ok()) return cuda;
    spdlog::info("backend auto: no cuda ({}); using cpu", cuda.status().ToString());
    return std::make_unique<CpuBackend>();
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("backend: unknown value \"%s\" (expected auto, cuda or cpu)", name));
}

}  // namespace gpuprobe
