#include "server/probe/npy_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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
  // A new file only: never through a symbolic link, never over an existing file.
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  const uint16_t header_len = static_cast<uint16_t>(header.size());
  std::string prefix("\x93NUMPY\x01\x00", 8);
  prefix.push_back(static_cast<char>(header_len & 0xFF));
  prefix.push_back(static_cast<char>(header_len >> 8));
  prefix += header;
  auto write_all = [fd](const char* bytes, size_t size) {
    while (size > 0) {
      const ssize_t n = write(fd, bytes, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  };
  const bool written =
      write_all(prefix.data(), prefix.size()) &&
      write_all(static_cast<const char*>(data), static_cast<size_t>(count) * element_bytes);
  const int error = errno;
  if (close(fd) != 0 || !written) {
    return absl::DataLossError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(written ? errno : error)));
  }
  return absl::OkStatus();
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
