// Picks the backend the daemon serves: `cpu`, `cuda`, or `auto` (cuda when a CUDA device is
// visible and the build has CUDA, else cpu).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, MakeBackend("auto"));
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/device/backend.h"

namespace gpuprobe {

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(std::string_view name);

// Backend::CheckGeometry of backend `name` ("cpu", "cuda"), without creating the backend: for a
// daemon whose backend lives in a worker process.
absl::Status CheckBackendGeometry(std::string_view name, const MoeGeometry& geometry,
                                  KernelVariant variant);

}  // namespace gpuprobe
