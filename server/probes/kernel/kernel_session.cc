#include "server/probes/kernel/kernel_session.h"

#include "absl/strings/str_format.h"

namespace gpuprobe {

absl::StatusOr<std::unique_ptr<KernelSession>> KernelSessionOn(Backend& device) {
#if GPUPROBE_HAVE_CUDA
  if (device.Name() == "cuda") return CudaKernelSession(device);
#endif
  return absl::FailedPreconditionError(absl::StrFormat(
      "probe: the kernel probe needs a cuda device; this gpuprobed's device is %s", device.Name()));
}

}  // namespace gpuprobe
