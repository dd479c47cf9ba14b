// Writes arrays as NumPy .npy files (format version 1.0, C order, little-endian), so that an
// exactness check's inputs and outputs can be verified offline with numpy.load. Each file is
// created new (never through a symbolic link, never over an existing file).
//
//   RETURN_IF_ERROR(WriteNpy(dir + "/sel.npy", sel.data(), {slots}));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace gpuprobe {

// Bytes of the file WriteNpy writes for `data_bytes` of data (a header of at most 128 bytes).
inline constexpr int64_t kNpyHeaderBytes = 128;

absl::Status WriteNpy(const std::string& path, const uint8_t* data,
                      const std::vector<int64_t>& shape);
absl::Status WriteNpy(const std::string& path, const int32_t* data,
                      const std::vector<int64_t>& shape);
absl::Status WriteNpy(const std::string& path, const float* data,
                      const std::vector<int64_t>& shape);
absl::Status WriteNpy(const std::string& path, const double* data,
                      const std::vector<int64_t>& shape);

}  // namespace gpuprobe
