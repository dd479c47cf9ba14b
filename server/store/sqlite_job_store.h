// The embedded job store: one SQLite file (WAL mode, synchronous FULL) used by one daemon, the
// default (DATA_DIR/gpuprobe.sqlite). The schema is versioned with PRAGMA user_version and
// migrated forward at open, one transaction per version.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<JobStore> store,
//                    SqliteJobStore::Open("/var/lib/gpuprobe/gpuprobe.sqlite"));
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/job_store.h"

namespace gpuprobe {

class SqliteJobStore {
 public:
  // Opens (creating) the store file, refusing a damaged file (an empty one included) with a
  // message naming it and how to recover. `max_bytes` > 0 bounds the file: writes past it fail
  // (as on a full disk) and the daemon fails the job that needed them. The caller holds the
  // file's directory (DataDirLock), so any job left RUNNING belongs to a daemon that is gone:
  // its lease is void and it is queued again (or failed) at once.
  static absl::StatusOr<std::unique_ptr<JobStore>> Open(const std::string& path,
                                                        int64_t max_bytes = 0);
};

}  // namespace gpuprobe
