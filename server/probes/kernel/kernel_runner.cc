#include "server/probes/kernel/kernel_runner.h"

#include "absl/strings/str_format.h"

namespace gpuprobe {

absl::StatusOr<std::unique_ptr<KernelRunner>> KernelRunnerOn(Backend& device) {
#if GPUPROBE_HAVE_CUDA
  if (device.Name() == "cuda") return CudaKernelRunner(device);
#endif
  return absl::FailedPreconditionError(absl::StrFormat(
      "probe: the kernel probe needs a cuda device; this gpuprobed's device is %s", device.Name()));
}

}  // namespace gpuprobe
