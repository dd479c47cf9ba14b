#include "server/device/backend_factory.h"

#include "absl/strings/str_format.h"
#include "server/device/cpu_backend.h"

namespace gpuprobe {

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(std::string_view name) {
  if (name == "cpu" || name == "auto") return std::make_unique<CpuBackend>();
  if (name == "cuda") {
    return absl::UnavailableError("backend: this build of gpuprobed has no cuda backend");
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("backend: unknown value \"%s\" (expected auto, cuda or cpu)", name));
}

}  // namespace gpuprobe
