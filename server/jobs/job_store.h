// The daemon's durable record of jobs and their events: SQLite in WAL mode under the data
// directory, schema versioned (PRAGMA user_version) and migrated forward at open. A job is
// stored before Submit answers and every event before it is streamed, so a crash loses
// nothing that a client was told.
//
// Thread-safe: one connection, serialized by SQLite's full mutex mode plus a mutex here for
// multi-statement operations.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<JobStore> store, JobStore::Open("/var/lib/gpuprobe"));
//   ASSIGN_OR_RETURN(JobStore::Inserted in, store->Insert(request, "127.0.0.1", absl::Now()));
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/jobs/sqlite_db.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

class JobStore {
 public:
  // The schema this build writes; older databases are migrated, newer ones refused.
  static constexpr int kSchemaVersion = 4;

  // Opens DATA_DIR/gpuprobe.sqlite, refusing a damaged file (an empty one included) with a
  // message naming it and how to recover. `max_bytes` > 0 bounds the file: writes past it fail
  // (as on a full disk) and the daemon fails the job that needed them.
  static absl::StatusOr<std::unique_ptr<JobStore>> Open(const std::string& data_dir,
                                                        int64_t max_bytes = 0);

  // The job an idempotency key already created within `scope`, if any.
  absl::StatusOr<std::optional<v1::Job>> FindByIdempotencyKey(const std::string& scope,
                                                              const std::string& key);

  struct Inserted {
    v1::Job job;
    bool created = false;  // false: an earlier job had the same idempotency key
  };
  // Stores the job and its first event (from `first_event`, given the stored job) in one
  // transaction: a refused insert leaves nothing stored. Idempotency keys are unique within
  // `key_scope`.
  absl::StatusOr<Inserted> Insert(const v1::SubmitRequest& request, const std::string& submitter,
                                  const std::string& key_scope, absl::Time now,
                                  const std::function<v1::JobEvent(const v1::Job&)>& first_event);

  // Writes and removes a row of a few pages: whether the store can take more now.
  absl::Status ProbeWrite();

  absl::StatusOr<v1::Job> Get(const std::string& id);
  absl::StatusOr<v1::ListJobsResponse> List(const v1::ListJobsRequest& request);
  int64_t CountQueued();

  // For metrics: jobs per state, and rows and checks stored over all jobs.
  struct Totals {
    std::map<v1::JobState, int64_t> jobs_by_state;
    int64_t results = 0;
  };
  absl::StatusOr<Totals> CountTotals();

  // The queued job that runs next on `device`: among those pinned to it or to no device,
  // highest priority, then oldest. A queued job whose stored request cannot be read is failed
  // (DATA_LOSS, logged once) on the way, and the queue moves on.
  absl::StatusOr<std::optional<v1::Job>> NextQueued(int device);
  // Queued jobs pinned to `device`.
  int64_t CountQueuedOn(int device);
  // QUEUED -> RUNNING on device `device_index` (described as `device`); counts the attempt.
  // Returns the attempt number.
  absl::StatusOr<int> MarkRunning(const std::string& id, int device_index,
                                  const std::string& device, absl::Time now);
  // `telemetry`: the device over the attempt (sweeps), stored with the record; null: none.
  absl::Status MarkFinished(const std::string& id, v1::JobState state, int error_code,
                            const std::string& error_message, absl::Time now,
                            const v1::TelemetrySummary* telemetry = nullptr);
  // Appends the job's next event (seq is assigned here, from 0) and counts rows and checks
  // of the attempt as the job's results.
  absl::Status AppendEvent(const std::string& id, const v1::JobEvent& event);
  absl::StatusOr<std::vector<v1::JobEvent>> Events(const std::string& id);

  // After a restart: each job left RUNNING is queued again if it has run fewer than
  // `max_attempts` times, else FAILED with a reason. Returns the ids queued again.
  absl::StatusOr<std::vector<std::string>> RecoverInterrupted(int max_attempts, absl::Time now);

 private:
  explicit JobStore(SqliteDb db) : db_(std::move(db)) {}
  absl::Status Migrate();
  absl::Status CheckIntegrity();
  absl::StatusOr<std::optional<v1::Job>> FindByKeyLocked(const std::string& scope,
                                                         const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Within the caller's transaction.
  absl::Status AppendEventLocked(const std::string& id, const v1::JobEvent& event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<v1::Job> GetLocked(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  SqliteDb db_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuprobe
