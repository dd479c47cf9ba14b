#include "server/device/backend_factory.h"

#include "absl/strings/str_format.h"
#include "server/device/cpu_backend.h"
#include "spdlog/spdlog.h"
#if GPUPROBE_HAVE_CUDA
#include "server/device/cuda_backend.h"
#endif

namespace gpuprobe {
namespace {

absl::StatusOr<std::unique_ptr<Backend>> MakeCuda(int device) {
#if GPUPROBE_HAVE_CUDA
  absl::StatusOr<std::unique_ptr<CudaBackend>> cuda = CudaBackend::Create(device);
  if (!cuda.ok()) return cuda.status();
  return std::unique_ptr<Backend>(*std::move(cuda));
#else
  (void)device;
  return absl::UnavailableError("this build of gpuprobed has no cuda backend");
#endif
}

int CudaDevices() {
#if GPUPROBE_HAVE_CUDA
  return CudaBackend::VisibleDevices();
#else
  return 0;
#endif
}

absl::StatusOr<std::unique_ptr<Backend>> MakeUnslowed(std::string_view name, int device,
                                                      int cpu_repeat) {
  if (name == "cpu") {
    if (device != 0) return absl::InvalidArgumentError("devices: the cpu backend is device 0 only");
    return std::make_unique<CpuBackend>(cpu_repeat);
  }
  if (name == "cuda") {
    absl::StatusOr<std::unique_ptr<Backend>> cuda = MakeCuda(device);
    if (!cuda.ok()) {
      return absl::UnavailableError(absl::StrFormat("backend: cuda: %s", cuda.status().message()));
    }
    return cuda;
  }
  if (name == "auto") {
    absl::StatusOr<std::unique_ptr<Backend>> cuda = MakeCuda(device);
    if (cuda.ok()) return cuda;
    spdlog::info("backend auto: no cuda ({}); using cpu", cuda.status().ToString());
    return std::make_unique<CpuBackend>(cpu_repeat);
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("backend: unknown value \"%s\" (expected auto, cuda or cpu)", name));
}

}  // namespace

int VisibleDevices(std::string_view name) {
  if (name == "cpu") return 1;
  const int cuda = CudaDevices();
  return name == "auto" && cuda == 0 ? 1 : cuda;
}

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(std::string_view name, int device,
                                                     InjectedSlowdown slowdown) {
  absl::StatusOr<std::unique_ptr<Backend>> backend =
      MakeUnslowed(name, device, slowdown.cpu_repeat);
  // After the backend's start-up calibration, which stays unslowed.
  if (backend.ok()) (*backend)->set_injected_wait_ns(slowdown.wait_ns_per_sample);
  return backend;
}

}  // namespace gpuprobe
