#include "server/store/postgres_job_store.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "server/store/postgres_connection.h"
#include "server/store/sql_job_store.h"

namespace gpuprobe {
namespace {

// Schema version 5, the first a PostgreSQL store has: the same tables and columns as a SQLite
// store migrated to version 5 (sqlite_job_store.cc), in PostgreSQL's types. Later versions
// are migration steps written for both stores.
constexpr char kSchemaV5[] = R"sql(
CREATE TABLE jobs (
  seq BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  state INTEGER NOT NULL,
  request BYTEA NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  submitter TEXT NOT NULL DEFAULT '',
  idempotency_key TEXT UNIQUE,
  created_us BIGINT NOT NULL,
  started_us BIGINT,
  finished_us BIGINT,
  device TEXT NOT NULL DEFAULT '',
  error_code INTEGER NOT NULL DEFAULT 0,
  error_message TEXT NOT NULL DEFAULT '',
  attempts INTEGER NOT NULL DEFAULT 0,
  results INTEGER NOT NULL DEFAULT 0,
  next_event INTEGER NOT NULL DEFAULT 0,
  pinned_device INTEGER,
  device_index INTEGER,
  telemetry BYTEA,
  target_gpu TEXT NOT NULL DEFAULT '',
  target_host TEXT NOT NULL DEFAULT '',
  host TEXT NOT NULL DEFAULT '',
  lease_owner TEXT NOT NULL DEFAULT '',
  lease_expires_us BIGINT NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_by_queue ON jobs(state, priority DESC, seq);
CREATE TABLE job_labels (
  job_seq BIGINT NOT NULL REFERENCES jobs(seq),
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (job_seq, key)
);
CREATE TABLE events (
  job_seq BIGINT NOT NULL REFERENCES jobs(seq),
  seq INTEGER NOT NULL,
  event BYTEA NOT NULL,
  PRIMARY KEY (job_seq, seq)
);
CREATE TABLE write_probe (bytes BYTEA NOT NULL);
CREATE TABLE daemons (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  started_us BIGINT NOT NULL,
  heartbeat_us BIGINT NOT NULL
);
CREATE TABLE devices (
  daemon_id TEXT NOT NULL,
  device_index INTEGER NOT NULL,
  model TEXT NOT NULL,
  description TEXT NOT NULL,
  calibrated_read_tbps DOUBLE PRECISION NOT NULL,
  running_job TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (daemon_id, device_index)
);
)sql";

// Schema version 6 (as sqlite_job_store.cc's): a job's probe and its resolved spec.
constexpr char kSchemaV6[] = R"sql(
ALTER TABLE jobs ADD COLUMN probe TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN resolved BYTEA;
ALTER TABLE jobs ADD COLUMN is_check INTEGER NOT NULL DEFAULT 0;
)sql";

// Schema version 7 (as sqlite_job_store.cc's): every job names its probe. Jobs stored before schema
// 6 named none: they were all moe-union's, the one probe there was (a check among them is a request
// whose work is a CheckRequest, which JobFromColumns reads from the request).
constexpr char kSchemaV7[] = R"sql(
UPDATE jobs SET probe = 'moe-union' WHERE probe = '';
)sql";

// Schema version 8 (as sqlite_job_store.cc's): modules clients bring for the kernel probe
// (content-addressed: id is the sha256 of bytes; record, the serialized gpuprobe.v1.Module), and
// the modules each job names, which ageing keeps while the job is queued or running.
constexpr char kSchemaV8[] = R"sql(
CREATE TABLE modules (
  id TEXT PRIMARY KEY,
  record BYTEA NOT NULL,
  bytes BYTEA NOT NULL,
  size_bytes BIGINT NOT NULL,
  uploader TEXT NOT NULL,
  uploaded_us BIGINT NOT NULL,
  used_us BIGINT NOT NULL
);
CREATE INDEX modules_by_use ON modules(used_us);
CREATE TABLE job_modules (
  job_seq BIGINT NOT NULL REFERENCES jobs(seq),
  module_id TEXT NOT NULL,
  PRIMARY KEY (job_seq, module_id)
);
)sql";

// Serializes migrations of daemons starting together (an arbitrary key of gpuprobe's own).
constexpr int64_t kMigrationLock = 0x67707570726f6265;  // "gpuprobe"

absl::Status Migrate(SqlConnection& db) {
  RETURN_IF_ERROR(db.Begin());
  auto step = [&]() -> absl::Status {
    RETURN_IF_ERROR(db.Query("SELECT pg_advisory_xact_lock(?1)", {kMigrationLock}).status());
    RETURN_IF_ERROR(
        db.Exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"));
    ASSIGN_OR_RETURN(SqlRows version, db.Query("SELECT MAX(version) FROM schema_version"));
    const int64_t current = version.empty() ? 0 : version.Int(0, 0);
    if (current > JobStore::kSchemaVersion) {
      return absl::FailedPreconditionError(
          absl::StrFormat("store: the database has schema version %d; this gpuprobed knows up "
                          "to %d",
                          current, JobStore::kSchemaVersion));
    }
    if (current == 0) RETURN_IF_ERROR(db.Exec(kSchemaV5));
    if (current < 6) RETURN_IF_ERROR(db.Exec(kSchemaV6));
    if (current < 7) RETURN_IF_ERROR(db.Exec(kSchemaV7));
    if (current < 8) RETURN_IF_ERROR(db.Exec(kSchemaV8));
    if (current < JobStore::kSchemaVersion) {
      RETURN_IF_ERROR(db.Query("INSERT INTO schema_version (version) VALUES (?1)",
                               {int64_t{JobStore::kSchemaVersion}})
                          .status());
    }
    return absl::OkStatus();
  };
  absl::Status s = step();
  if (s.ok()) s = db.Exec("COMMIT");
  if (!s.ok()) (void)db.Exec("ROLLBACK");
  return s;
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobStore>> PostgresJobStore::Open(const std::string& url) {
  ASSIGN_OR_RETURN(std::unique_ptr<PostgresConnection> db, PostgresConnection::Open(url));
  RETURN_IF_ERROR(Migrate(*db));
  // A second connection hears the other daemons' events and jobs as they commit, and a third
  // carries the heartbeat, whatever the first is busy with.
  ASSIGN_OR_RETURN(std::unique_ptr<PostgresConnection> listener, PostgresConnection::Open(url));
  RETURN_IF_ERROR(listener->Listen(SqlJobStore::kEventChannel));
  RETURN_IF_ERROR(listener->Listen(SqlJobStore::kQueueChannel));
  ASSIGN_OR_RETURN(std::unique_ptr<PostgresConnection> fleet, PostgresConnection::Open(url));
  return std::make_unique<SqlJobStore>(std::move(db), "postgresql", /*shared=*/true,
                                       std::move(listener), std::move(fleet));
}

}  // namespace gpuprobe
