#include "server/store/sqlite_job_store.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "server/store/sql_job_store.h"
#include "server/store/sqlite_connection.h"

namespace gpuprobe {
namespace {

// Schema version 1. Times are Unix microseconds; requests and events are serialized protos.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  state INTEGER NOT NULL,
  request BLOB NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  submitter TEXT NOT NULL DEFAULT '',
  idempotency_key TEXT UNIQUE,
  created_us INTEGER NOT NULL,
  started_us INTEGER,
  finished_us INTEGER,
  device TEXT NOT NULL DEFAULT '',
  error_code INTEGER NOT NULL DEFAULT 0,
  error_message TEXT NOT NULL DEFAULT '',
  attempts INTEGER NOT NULL DEFAULT 0,
  results INTEGER NOT NULL DEFAULT 0,
  next_event INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_by_queue ON jobs(state, priority DESC, seq);
CREATE TABLE job_labels (
  job_seq INTEGER NOT NULL REFERENCES jobs(seq),
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (job_seq, key)
);
CREATE TABLE events (
  job_seq INTEGER NOT NULL REFERENCES jobs(seq),
  seq INTEGER NOT NULL,
  event BLOB NOT NULL,
  PRIMARY KEY (job_seq, seq)
);
)sql";

// Schema version 2: a job may be pinned to one device (NULL: the first free device).
constexpr char kSchemaV2[] = R"sql(
ALTER TABLE jobs ADD COLUMN pinned_device INTEGER;
ALTER TABLE jobs ADD COLUMN device_index INTEGER;
)sql";

// Schema version 3: a table the store writes to find out whether it can (ProbeWrite).
constexpr char kSchemaV3[] = R"sql(
CREATE TABLE write_probe (bytes BLOB NOT NULL);
)sql";

// Schema version 4: the device's telemetry over a job's last attempt (a TelemetrySummary).
constexpr char kSchemaV4[] = R"sql(
ALTER TABLE jobs ADD COLUMN telemetry BLOB;
)sql";

// Schema version 5: the fleet. Jobs may target a device model or a host and hold a lease while
// they run; daemons and their devices are registered (see JobStore).
constexpr char kSchemaV5[] = R"sql(
ALTER TABLE jobs ADD COLUMN target_gpu TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN target_host TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN lease_expires_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
CREATE TABLE daemons (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  started_us INTEGER NOT NULL,
  heartbeat_us INTEGER NOT NULL
);
CREATE TABLE devices (
  daemon_id TEXT NOT NULL,
  device_index INTEGER NOT NULL,
  model TEXT NOT NULL,
  description TEXT NOT NULL,
  calibrated_read_tbps REAL NOT NULL,
  running_job TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (daemon_id, device_index)
);
)sql";

// Schema version 6: a job's probe and its resolved spec, stored when it is accepted (jobs of
// earlier versions get theirs once, at the next start: JobStore::Unresolved).
constexpr char kSchemaV6[] = R"sql(
ALTER TABLE jobs ADD COLUMN probe TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN resolved BLOB;
ALTER TABLE jobs ADD COLUMN is_check INTEGER NOT NULL DEFAULT 0;
)sql";

// Schema version 7: every job names its probe. Jobs stored before schema 6 named none: they were
// all moe-union's, the one probe there was (a check among them is a request whose work is a
// CheckRequest, which JobFromColumns reads from the request).
constexpr char kSchemaV7[] = R"sql(
UPDATE jobs SET probe = 'moe-union' WHERE probe = '';
)sql";

// Schema version 8: modules clients bring for the kernel probe (content-addressed: id
// is the sha256 of bytes; record, the serialized gpuprobe.v1.Module), and the modules each job
// names, which ageing keeps while the job is queued or running.
constexpr char kSchemaV8[] = R"sql(
CREATE TABLE modules (
  id TEXT PRIMARY KEY,
  record BLOB NOT NULL,
  bytes BLOB NOT NULL,
  size_bytes INTEGER NOT NULL,
  uploader TEXT NOT NULL,
  uploaded_us INTEGER NOT NULL,
  used_us INTEGER NOT NULL
);
CREATE INDEX modules_by_use ON modules(used_us);
CREATE TABLE job_modules (
  job_seq INTEGER NOT NULL REFERENCES jobs(seq),
  module_id TEXT NOT NULL,
  PRIMARY KEY (job_seq, module_id)
);
)sql";

constexpr const char* kMigrations[] = {kSchemaV1, kSchemaV2, kSchemaV3, kSchemaV4,
                                       kSchemaV5, kSchemaV6, kSchemaV7, kSchemaV8};
static_assert(std::size(kMigrations) == JobStore::kSchemaVersion);

absl::Status CheckIntegrity(SqlConnection& db) {
  ASSIGN_OR_RETURN(SqlRows check, db.Query("PRAGMA quick_check"));
  if (check.empty()) return absl::DataLossError("the integrity check returned nothing");
  if (check.Text(0, 0) != "ok") {
    return absl::DataLossError(absl::StrCat("integrity check: ", check.Text(0, 0)));
  }
  return absl::OkStatus();
}

absl::Status Migrate(SqlConnection& db, const std::string& path) {
  // WAL: readers never block the writer; FULL: a committed event survives power loss too.
  RETURN_IF_ERROR(
      db.Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;"));
  ASSIGN_OR_RETURN(SqlRows version, db.Query("PRAGMA user_version"));
  const int64_t current = version.empty() ? 0 : version.Int(0, 0);
  if (current > JobStore::kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrFormat("store: %s has schema version %d; this gpuprobed knows up to %d", path,
                        current, JobStore::kSchemaVersion));
  }
  for (int64_t v = current + 1; v <= JobStore::kSchemaVersion; ++v) {
    const absl::Status migrated = db.Exec(
        absl::StrCat("BEGIN; ", kMigrations[v - 1], " PRAGMA user_version = ", v, "; COMMIT;"));
    if (!migrated.ok()) {
      return absl::Status(migrated.code(),
                          absl::StrFormat("store: %s: cannot bring the schema to version %d (is "
                                          "it another program's database?): %s",
                                          path, v, migrated.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobStore>> SqliteJobStore::Open(const std::string& path,
                                                               int64_t max_bytes) {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("store: cannot create ", dir.string(), ": ", ec.message()));
  }
  const std::string recover = absl::StrCat("; move it aside (with any ", path,
                                           "-wal and -shm beside it) to start an empty store, "
                                           "or restore it from a backup");
  if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) == 0) {
    return absl::DataLossError(
        absl::StrCat("store: ", path, " is empty (0 bytes), not a gpuprobe store", recover));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteConnection> db,
                   SqliteConnection::Open(path, SqliteConnection::kThisProcessOnly));
  if (absl::Status s = CheckIntegrity(*db); !s.ok()) {
    return absl::DataLossError(
        absl::StrCat("store: ", path, " is damaged (", s.message(), ")", recover));
  }
  // A start writes (the schema, the registry): a full file system is named, not its SQL.
  auto writable = [&path](absl::Status s) {
    if (!absl::IsResourceExhausted(s)) return s;
    return absl::ResourceExhaustedError(absl::StrCat(
        "store: ", path,
        " cannot take writes: the file system that holds it is full, or the "
        "store reached --max-store-bytes; free space there (df ",
        std::filesystem::path(path).parent_path().string(), ") or raise --max-store-bytes"));
  };
  RETURN_IF_ERROR(writable(Migrate(*db, path)));
  if (max_bytes > 0) {
    ASSIGN_OR_RETURN(SqlRows page, db->Query("PRAGMA page_size"));
    const int64_t page_bytes = page.empty() ? 4096 : page.Int(0, 0);
    RETURN_IF_ERROR(db->Exec(
        absl::StrCat("PRAGMA max_page_count = ", std::max<int64_t>(1, max_bytes / page_bytes))));
  }
  // This process holds the file alone (its flock, taken before anything was read), so no other
  // daemon can be running a job of it: the registry and the leases of an earlier one are void.
  RETURN_IF_ERROR(
      writable(db->Exec("BEGIN; DELETE FROM devices; DELETE FROM daemons; "
                        "UPDATE jobs SET lease_expires_us = 0; COMMIT;")));
  return std::make_unique<SqlJobStore>(std::move(db), "sqlite", /*shared=*/false);
}

}  // namespace gpuprobe
