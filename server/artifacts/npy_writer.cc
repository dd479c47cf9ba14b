#include "server/artifacts/npy_writer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/artifacts/new_file.h"

namespace gpuprobe {
namespace {

absl::Status Write(const std::string& path, const char* dtype, const void* data,
                   size_t element_bytes, const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  const std::string shape_text = shape.size() == 1
                                     ? absl::StrCat("(", shape[0], ",)")
                                     : absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
  std::string header =
      absl::StrCat("{'descr': '", dtype, "', 'fortran_order': False, 'shape': ", shape_text, ", }");
  // Magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of
  // 64 bytes and ended by a newline.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  const uint16_t header_len = static_cast<uint16_t>(header.size());
  std::string prefix("\x93NUMPY\x01\x00", 8);
  prefix.push_back(static_cast<char>(header_len & 0xFF));
  prefix.push_back(static_cast<char>(header_len >> 8));
  prefix += header;
  return WriteNewFile(path,
                      {prefix, absl::string_view(static_cast<const char*>(data),
                                                 static_cast<size_t>(count) * element_bytes)});
}

}  // namespace

absl::Status WriteNpy(const std::string& path, const uint8_t* data,
                      const std::vector<int64_t>& shape) {
  return Write(path, "|u1", data, 1, shape);
}
absl::Status WriteNpy(const std::string& path, const int32_t* data,
                      const std::vector<int64_t>& shape) {
  return Write(path, "<i4", data, 4, shape);
}
absl::Status WriteNpy(const std::string& path, const float* data,
                      const std::vector<int64_t>& shape) {
  return Write(path, "<f4", data, 4, shape);
}
absl::Status WriteNpy(const std::string& path, const double* data,
                      const std::vector<int64_t>& shape) {
  return Write(path, "<f8", data, 8, shape);
}

}  // namespace gpuprobe
