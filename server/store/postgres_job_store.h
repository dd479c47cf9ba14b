// The fleet's job store: a PostgreSQL database that several daemons share. Devices claim jobs
// with SELECT ... FOR UPDATE SKIP LOCKED, so a job goes to exactly one of them; every stored
// event and queued job is announced with NOTIFY, which a second connection per daemon LISTENs
// to (JobStore::AwaitChanges), so watchers and idle devices hear it at once; a third connection
// carries the heartbeat. The schema is versioned in table schema_version and migrated at open
// under an advisory lock, so daemons starting together migrate once.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<JobStore> store,
//                    PostgresJobStore::Open("postgresql://gpuprobe@db/gpuprobe"));
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/job_store.h"

namespace gpuprobe {

class PostgresJobStore {
 public:
  // Connects (libpq's URL or key=value form) and migrates the schema.
  static absl::StatusOr<std::unique_ptr<JobStore>> Open(const std::string& url);
};

}  // namespace gpuprobe
