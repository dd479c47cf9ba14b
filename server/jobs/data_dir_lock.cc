#include "server/jobs/data_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace gpuprobe {

absl::StatusOr<DataDirLock> DataDirLock::Acquire(const std::string& data_dir) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("data-dir: cannot create ", data_dir, ": ", ec.message()));
  }
  const std::string path = data_dir + "/gpuprobed.lock";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("data-dir: cannot open ", path, ": ", std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char pid[32] = {};
    const ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
    close(fd);
    if (error == EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          absl::StrCat("data-dir: ", data_dir, " is in use by another gpuprobed (pid ",
                       n > 0 ? absl::StripAsciiWhitespace(pid) : "unknown",
                       "); one daemon per data directory: stop it or pass another --data-dir"));
    }
    return absl::PermissionDeniedError(
        absl::StrCat("data-dir: cannot lock ", path, ": ", std::strerror(error)));
  }
  const std::string pid = absl::StrCat(getpid(), "\n");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    const int error = errno;
    close(fd);
    return absl::PermissionDeniedError(
        absl::StrCat("data-dir: cannot write ", path, ": ", std::strerror(error)));
  }
  return DataDirLock(fd);
}

DataDirLock::DataDirLock(DataDirLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

DataDirLock& DataDirLock::operator=(DataDirLock&& other) noexcept {
  std::swap(fd_, other.fd_);
  return *this;
}

DataDirLock::~DataDirLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace gpuprobe
