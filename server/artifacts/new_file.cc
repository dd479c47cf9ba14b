#include "server/artifacts/new_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace gpuprobe {

absl::Status WriteNewFile(const std::string& path, std::initializer_list<absl::string_view> parts) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  bool written = true;
  for (absl::string_view part : parts) {
    const char* bytes = part.data();
    size_t size = part.size();
    while (written && size > 0) {
      const ssize_t n = write(fd, bytes, size);
      if (n < 0 && errno == EINTR) continue;
      written = n > 0;
      if (written) {
        bytes += n;
        size -= static_cast<size_t>(n);
      }
    }
  }
  const int error = errno;
  if (close(fd) != 0 || !written) {
    return absl::DataLossError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(written ? errno : error)));
  }
  return absl::OkStatus();
}

}  // namespace gpuprobe
