// One daemon per data directory: an exclusive advisory lock (flock) on DATA_DIR/gpuprobed.lock,
// taken before anything in the directory is read and held for the process's life. The file
// holds the owner's pid, so a second daemon can say who has it. The descriptor is close-on-exec:
// worker processes never inherit the lock.
//
//   ASSIGN_OR_RETURN(DataDirLock lock, DataDirLock::Acquire("/var/lib/gpuprobe"));
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace gpuprobe {

class DataDirLock {
 public:
  // Creates the directory if missing. FAILED_PRECONDITION naming the directory and the pid
  // that holds it when another process has the lock.
  static absl::StatusOr<DataDirLock> Acquire(const std::string& data_dir);

  DataDirLock(DataDirLock&& other) noexcept;
  DataDirLock& operator=(DataDirLock&& other) noexcept;
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;
  ~DataDirLock();  // releases the lock

 private:
  explicit DataDirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace gpuprobe
