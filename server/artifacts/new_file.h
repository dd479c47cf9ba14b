// Writes an artifact file: a new file only (never over an existing one), never through a
// symbolic link, mode 0600, its parts in order.
//
//   RETURN_IF_ERROR(WriteNewFile(dir + "/stdout.txt", {out}));
#pragma once

#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpuprobe {

// PERMISSION_DENIED when it cannot be created, DATA_LOSS when it cannot be written whole.
absl::Status WriteNewFile(const std::string& path, std::initializer_list<absl::string_view> parts);

}  // namespace gpuprobe
