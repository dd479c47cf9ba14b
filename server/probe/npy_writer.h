// Writes arrays as NumPy .npy files (format version 1.0, C order, little-endian), so that an
// exactness check's inputs and outputs can be verified offline with numpy.load.
//
//   RETURN_IF_ERROR(WriteNpy(dir + "/sel.npy", sel.data(), {slots}));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace gpuprobe {

absl::Status WriteNpy(const std::string& path, const uint8_t* data,
                      const std::vector<int64_t>& shape);
absl::Status WriteNpy(const std::string& path, const int32_t* data,
                      const std::vector<int64_t>& shape);
absl::Status WriteNpy(const std::string& path, const float* data,
                      const std::vector<int64_t>& shape);
absl::Status WriteNpy(const std::string& path, const double* data,
                      const std::vector<int64_t>& shape);

}  // namespace gpuprobe
