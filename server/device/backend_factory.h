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

}  // namespace gpuprobe
