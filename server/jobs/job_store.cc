#include "server/jobs/job_store.h"

#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "google/protobuf/util/time_util.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

using google::protobuf::util::TimeUtil;

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

// Idempotency keys are unique per scope: the column holds the key, or (scoped) the scope, a
// newline and the key. Unscoped keys keep the form schema 2 stored.
std::string ScopedKey(const std::string& scope, const std::string& key) {
  return scope.empty() ? key : absl::StrCat(scope, "\n", key);
}

// More label filters than any dashboard needs would only make the query deep.
constexpr int kMaxLabelFilters = 16;

constexpr char kJobColumns[] =
    "seq, id, state, request, priority, submitter, created_us, started_us, finished_us, device, "
    "error_code, error_message, attempts, results, device_index, telemetry";

google::protobuf::Timestamp Micros(int64_t us) { return TimeUtil::MicrosecondsToTimestamp(us); }

constexpr char kCorruptRequest[] =
    "the stored request cannot be read (a damaged record); the job was failed";

constexpr char kCorruptTelemetry[] =
    "none: the stored telemetry summary cannot be read (a damaged record)";

// A row's job. A request that cannot be parsed leaves the request empty and the job shown as
// FAILED with DATA_LOSS, so that one damaged record never fails a whole listing.
v1::Job JobFromRow(SqliteStatement& st) {
  v1::Job job;
  job.set_id(st.Text(1));
  job.set_state(static_cast<v1::JobState>(st.Int(2)));
  const bool request_ok = job.mutable_request()->ParseFromString(st.Text(3));
  job.set_submitter(st.Text(5));
  *job.mutable_created_at() = Micros(st.Int(6));
  if (!st.IsNull(7)) *job.mutable_started_at() = Micros(st.Int(7));
  if (!st.IsNull(8)) *job.mutable_finished_at() = Micros(st.Int(8));
  job.set_device(st.Text(9));
  job.set_error_code(static_cast<int32_t>(st.Int(10)));
  job.set_error_message(st.Text(11));
  job.set_attempts(static_cast<uint32_t>(st.Int(12)));
  job.set_results(static_cast<uint32_t>(st.Int(13)));
  if (!st.IsNull(14)) job.set_device_index(static_cast<uint32_t>(st.Int(14)));
  if (!st.IsNull(15) && !job.mutable_telemetry()->ParseFromString(st.Text(15))) {
    job.clear_telemetry();
    job.mutable_telemetry()->set_note(kCorruptTelemetry);
  }
  if (!request_ok) {
    job.clear_request();
    job.set_state(v1::JOB_STATE_FAILED);
    job.set_error_code(static_cast<int32_t>(absl::StatusCode::kDataLoss));
    job.set_error_message(kCorruptRequest);
  }
  return job;
}

bool IsCorrupt(const v1::Job& job) {
  return job.error_code() == static_cast<int32_t>(absl::StatusCode::kDataLoss) &&
         job.error_message() == kCorruptRequest;
}

const google::protobuf::Map<std::string, std::string>& LabelsOf(const v1::SubmitRequest& r) {
  return r.has_check() ? r.check().labels() : r.sweep().labels();
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobStore>> JobStore::Open(const std::string& data_dir,
                                                         int64_t max_bytes) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("data-dir: cannot create ", data_dir, ": ", ec.message()));
  }
  const std::string path = data_dir + "/gpuprobe.sqlite";
  const std::string recover = absl::StrCat("; move it aside (with any ", path,
                                           "-wal and -shm beside it) to start an empty store, "
                                           "or restore it from a backup");
  if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) == 0) {
    return absl::DataLossError(
        absl::StrCat("data-dir: ", path, " is empty (0 bytes), not a gpuprobe store", recover));
  }
  ASSIGN_OR_RETURN(SqliteDb db, SqliteDb::Open(path));
  std::unique_ptr<JobStore> store(new JobStore(std::move(db)));
  if (absl::Status s = store->CheckIntegrity(); !s.ok()) {
    return absl::DataLossError(
        absl::StrCat("data-dir: ", path, " is damaged (", s.message(), ")", recover));
  }
  RETURN_IF_ERROR(store->Migrate());
  if (max_bytes > 0) {
    absl::MutexLock lock(&store->mu_);
    ASSIGN_OR_RETURN(SqliteStatement page, store->db_.Prepare("PRAGMA page_size"));
    ASSIGN_OR_RETURN(bool row, page.Step());
    const int64_t page_bytes = row ? page.Int(0) : 4096;
    RETURN_IF_ERROR(store->db_.Exec(
        absl::StrCat("PRAGMA max_page_count = ", std::max<int64_t>(1, max_bytes / page_bytes))));
  }
  return store;
}

absl::Status JobStore::CheckIntegrity() {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqliteStatement check, db_.Prepare("PRAGMA quick_check"));
  ASSIGN_OR_RETURN(bool row, check.Step());
  if (!row) return absl::DataLossError("the integrity check returned nothing");
  const std::string verdict = check.Text(0);
  if (verdict != "ok") return absl::DataLossError(absl::StrCat("integrity check: ", verdict));
  return absl::OkStatus();
}

absl::Status JobStore::ProbeWrite() {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(db_.Exec("BEGIN IMMEDIATE"));
  // A row as large as a few events needs pages of its own: a full store refuses it.
  absl::Status s = db_.Exec(
      "INSERT INTO write_probe VALUES (zeroblob(8192)); "
      "DELETE FROM write_probe;");
  if (s.ok()) s = db_.Exec("COMMIT");
  if (!s.ok()) (void)db_.Exec("ROLLBACK");
  return s;
}

absl::Status JobStore::Migrate() {
  absl::MutexLock lock(&mu_);
  // WAL: readers never block the writer; FULL: a committed event survives power loss too.
  RETURN_IF_ERROR(
      db_.Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; "
               "PRAGMA foreign_keys=ON;"));
  ASSIGN_OR_RETURN(SqliteStatement version, db_.Prepare("PRAGMA user_version"));
  ASSIGN_OR_RETURN(bool row, version.Step());
  const int64_t current = row ? version.Int(0) : 0;
  if (current > kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrFormat("data-dir: the store has schema version %d; this gpuprobed knows up to %d",
                        current, kSchemaVersion));
  }
  // Each step migrates one version forward, in its own transaction.
  if (current < 1) {
    RETURN_IF_ERROR(
        db_.Exec(absl::StrCat("BEGIN; ", kSchemaV1, " PRAGMA user_version = 1; COMMIT;")));
  }
  if (current < 2) {
    RETURN_IF_ERROR(
        db_.Exec(absl::StrCat("BEGIN; ", kSchemaV2, " PRAGMA user_version = 2; COMMIT;")));
  }
  if (current < 3) {
    RETURN_IF_ERROR(
        db_.Exec(absl::StrCat("BEGIN; ", kSchemaV3, " PRAGMA user_version = 3; COMMIT;")));
  }
  if (current < 4) {
    RETURN_IF_ERROR(
        db_.Exec(absl::StrCat("BEGIN; ", kSchemaV4, " PRAGMA user_version = 4; COMMIT;")));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<v1::Job>> JobStore::FindByIdempotencyKey(const std::string& scope,
                                                                      const std::string& key) {
  absl::MutexLock lock(&mu_);
  return FindByKeyLocked(scope, key);
}

absl::StatusOr<std::optional<v1::Job>> JobStore::FindByKeyLocked(const std::string& scope,
                                                                 const std::string& key) {
  if (key.empty()) return std::nullopt;
  ASSIGN_OR_RETURN(SqliteStatement find,
                   db_.Prepare("SELECT id FROM jobs WHERE idempotency_key = ?"));
  find.Bind(1, ScopedKey(scope, key));
  ASSIGN_OR_RETURN(bool found, find.Step());
  if (!found) return std::nullopt;
  ASSIGN_OR_RETURN(v1::Job job, GetLocked(find.Text(0)));
  return job;
}

absl::StatusOr<JobStore::Inserted> JobStore::Insert(
    const v1::SubmitRequest& request, const std::string& submitter, const std::string& key_scope,
    absl::Time now, const std::function<v1::JobEvent(const v1::Job&)>& first_event) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(std::optional<v1::Job> earlier,
                   FindByKeyLocked(key_scope, request.idempotency_key()));
  if (earlier.has_value()) return Inserted{*std::move(earlier), false};
  RETURN_IF_ERROR(db_.Exec("BEGIN IMMEDIATE"));
  auto rollback_on_error = [&](absl::Status s) {
    if (!s.ok()) (void)db_.Exec("ROLLBACK");
    return s;
  };
  ASSIGN_OR_RETURN(SqliteStatement insert,
                   db_.Prepare("INSERT INTO jobs (id, state, request, priority, submitter, "
                               "idempotency_key, created_us, pinned_device) "
                               "VALUES ('', ?, ?, ?, ?, ?, ?, ?)"));
  insert.Bind(1, int64_t{v1::JOB_STATE_QUEUED});
  insert.BindBlob(2, request.SerializeAsString());
  insert.Bind(3, int64_t{request.priority()});
  insert.Bind(4, submitter);
  if (request.idempotency_key().empty()) {
    insert.BindNull(5);
  } else {
    insert.Bind(5, ScopedKey(key_scope, request.idempotency_key()));
  }
  insert.Bind(6, absl::ToUnixMicros(now));
  if (request.has_device()) {
    insert.Bind(7, int64_t{request.device()});
  } else {
    insert.BindNull(7);
  }
  RETURN_IF_ERROR(rollback_on_error(insert.Run()));
  const int64_t seq = db_.LastInsertRowId();
  const std::string id = absl::StrCat("job-", seq);
  ASSIGN_OR_RETURN(SqliteStatement name, db_.Prepare("UPDATE jobs SET id = ? WHERE seq = ?"));
  name.Bind(1, id);
  name.Bind(2, seq);
  RETURN_IF_ERROR(rollback_on_error(name.Run()));
  ASSIGN_OR_RETURN(SqliteStatement label,
                   db_.Prepare("INSERT INTO job_labels (job_seq, key, value) VALUES (?, ?, ?)"));
  for (const auto& [key, value] : LabelsOf(request)) {
    label.Reset();
    label.Bind(1, seq);
    label.Bind(2, key);
    label.Bind(3, value);
    RETURN_IF_ERROR(rollback_on_error(label.Run()));
  }
  absl::StatusOr<v1::Job> job = GetLocked(id);
  RETURN_IF_ERROR(rollback_on_error(job.status()));
  RETURN_IF_ERROR(rollback_on_error(AppendEventLocked(id, first_event(*job))));
  RETURN_IF_ERROR(rollback_on_error(db_.Exec("COMMIT")));
  return Inserted{*std::move(job), true};
}

absl::StatusOr<v1::Job> JobStore::Get(const std::string& id) {
  absl::MutexLock lock(&mu_);
  return GetLocked(id);
}

absl::StatusOr<v1::Job> JobStore::GetLocked(const std::string& id) {
  ASSIGN_OR_RETURN(SqliteStatement st,
                   db_.Prepare(absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE id = ?")));
  st.Bind(1, id);
  ASSIGN_OR_RETURN(bool found, st.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("job_id: no job \"", id, "\""));
  v1::Job job = JobFromRow(st);
  if (job.state() == v1::JOB_STATE_QUEUED) {
    ASSIGN_OR_RETURN(SqliteStatement ahead,
                     db_.Prepare("SELECT COUNT(*) FROM jobs WHERE state = ? OR (state = ? AND "
                                 "(priority > ? OR (priority = ? AND seq < ?)))"));
    ahead.Bind(1, int64_t{v1::JOB_STATE_RUNNING});
    ahead.Bind(2, int64_t{v1::JOB_STATE_QUEUED});
    ahead.Bind(3, st.Int(4));
    ahead.Bind(4, st.Int(4));
    ahead.Bind(5, st.Int(0));
    ASSIGN_OR_RETURN(bool counted, ahead.Step());
    if (counted) job.set_queue_position(static_cast<uint32_t>(ahead.Int(0)));
  }
  return job;
}

absl::StatusOr<v1::ListJobsResponse> JobStore::List(const v1::ListJobsRequest& request) {
  const int64_t page = request.page_size() == 0 ? 50 : std::min<int64_t>(request.page_size(), 1000);
  int64_t before_seq = INT64_MAX;
  if (!request.page_token().empty() &&
      (!absl::SimpleAtoi(request.page_token(), &before_seq) || before_seq < 1)) {
    return absl::InvalidArgumentError("page_token: not a token this server returned");
  }
  for (int state : request.states()) {
    if (state == v1::JOB_STATE_UNSPECIFIED || !v1::JobState_IsValid(state)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("states: %d is not a job state (1..%d)", state, v1::JobState_MAX));
    }
  }
  for (const auto* t : {&request.created_after(), &request.created_before()}) {
    if (t->seconds() < TimeUtil::kTimestampMinSeconds ||
        t->seconds() > TimeUtil::kTimestampMaxSeconds || t->nanos() < 0 ||
        t->nanos() > 999'999'999) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "created_after/created_before: %d s is outside 0001-01-01..9999-12-31", t->seconds()));
    }
  }
  if (request.labels().size() > kMaxLabelFilters) {
    return absl::InvalidArgumentError(absl::StrFormat("labels: %d label filters; at most %d",
                                                      request.labels().size(), kMaxLabelFilters));
  }
  std::string sql = absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE seq < ?");
  std::vector<std::string> states;
  for (int state : request.states()) states.push_back(absl::StrCat(state));
  if (!states.empty()) absl::StrAppend(&sql, " AND state IN (", absl::StrJoin(states, ","), ")");
  if (request.has_created_after()) absl::StrAppend(&sql, " AND created_us >= ?");
  if (request.has_created_before()) absl::StrAppend(&sql, " AND created_us < ?");
  for (size_t i = 0; i < request.labels().size(); ++i) {
    absl::StrAppend(&sql,
                    " AND EXISTS (SELECT 1 FROM job_labels l WHERE l.job_seq = jobs.seq "
                    "AND l.key = ? AND l.value = ?)");
  }
  absl::StrAppend(&sql, " ORDER BY seq DESC LIMIT ?");

  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqliteStatement st, db_.Prepare(sql));
  int index = 1;
  st.Bind(index++, before_seq);
  if (request.has_created_after()) {
    st.Bind(index++, TimeUtil::TimestampToMicroseconds(request.created_after()));
  }
  if (request.has_created_before()) {
    st.Bind(index++, TimeUtil::TimestampToMicroseconds(request.created_before()));
  }
  for (const auto& [key, value] : request.labels()) {
    st.Bind(index++, key);
    st.Bind(index++, value);
  }
  st.Bind(index, page + 1);  // one more tells whether another page exists
  v1::ListJobsResponse response;
  int64_t last_seq = 0;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    if (response.jobs_size() == page) {
      response.set_next_page_token(absl::StrCat(last_seq));
      break;
    }
    *response.add_jobs() = JobFromRow(st);
    last_seq = st.Int(0);
  }
  return response;
}

int64_t JobStore::CountQueued() {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<SqliteStatement> st = db_.Prepare("SELECT COUNT(*) FROM jobs WHERE state = ?");
  if (!st.ok()) return 0;
  st->Bind(1, int64_t{v1::JOB_STATE_QUEUED});
  absl::StatusOr<bool> row = st->Step();
  return row.ok() && *row ? st->Int(0) : 0;
}

absl::StatusOr<JobStore::Totals> JobStore::CountTotals() {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqliteStatement st, db_.Prepare("SELECT state, COUNT(*), SUM(results) FROM "
                                                   "jobs GROUP BY state"));
  Totals totals;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    totals.jobs_by_state[static_cast<v1::JobState>(st.Int(0))] = st.Int(1);
    totals.results += st.Int(2);
  }
  return totals;
}

int64_t JobStore::CountQueuedOn(int device) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<SqliteStatement> st =
      db_.Prepare("SELECT COUNT(*) FROM jobs WHERE state = ? AND pinned_device = ?");
  if (!st.ok()) return 0;
  st->Bind(1, int64_t{v1::JOB_STATE_QUEUED});
  st->Bind(2, int64_t{device});
  absl::StatusOr<bool> row = st->Step();
  return row.ok() && *row ? st->Int(0) : 0;
}

absl::StatusOr<std::optional<v1::Job>> JobStore::NextQueued(int device) {
  absl::MutexLock lock(&mu_);
  while (true) {
    ASSIGN_OR_RETURN(SqliteStatement st,
                     db_.Prepare(absl::StrCat("SELECT ", kJobColumns,
                                              " FROM jobs WHERE state = ? "
                                              "AND (pinned_device IS NULL OR pinned_device = ?) "
                                              "ORDER BY priority DESC, seq LIMIT 1")));
    st.Bind(1, int64_t{v1::JOB_STATE_QUEUED});
    st.Bind(2, int64_t{device});
    ASSIGN_OR_RETURN(bool found, st.Step());
    if (!found) return std::nullopt;
    v1::Job job = JobFromRow(st);
    if (!IsCorrupt(job)) return job;
    // Quarantine: fail it once, so it is never picked (nor logged) again.
    spdlog::error("job {}: {}", job.id(), kCorruptRequest);
    ASSIGN_OR_RETURN(SqliteStatement fail,
                     db_.Prepare("UPDATE jobs SET state = ?, error_code = ?, error_message = ?, "
                                 "finished_us = ? WHERE id = ?"));
    fail.Bind(1, int64_t{v1::JOB_STATE_FAILED});
    fail.Bind(2, static_cast<int64_t>(absl::StatusCode::kDataLoss));
    fail.Bind(3, kCorruptRequest);
    fail.Bind(4, absl::ToUnixMicros(absl::Now()));
    fail.Bind(5, job.id());
    RETURN_IF_ERROR(fail.Run());
  }
}

absl::StatusOr<int> JobStore::MarkRunning(const std::string& id, int device_index,
                                          const std::string& device, absl::Time now) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqliteStatement st,
                   db_.Prepare("UPDATE jobs SET state = ?, device = ?, started_us = ?, "
                               "attempts = attempts + 1, results = 0, device_index = ? "
                               "WHERE id = ? AND state = ? RETURNING attempts"));
  st.Bind(1, int64_t{v1::JOB_STATE_RUNNING});
  st.Bind(2, device);
  st.Bind(3, absl::ToUnixMicros(now));
  st.Bind(4, int64_t{device_index});
  st.Bind(5, id);
  st.Bind(6, int64_t{v1::JOB_STATE_QUEUED});
  ASSIGN_OR_RETURN(bool updated, st.Step());
  if (!updated) return absl::FailedPreconditionError(absl::StrCat("job ", id, " is not queued"));
  const int attempt = static_cast<int>(st.Int(0));
  RETURN_IF_ERROR(st.Run());
  return attempt;
}

absl::Status JobStore::MarkFinished(const std::string& id, v1::JobState state, int error_code,
                                    const std::string& error_message, absl::Time now,
                                    const v1::TelemetrySummary* telemetry) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqliteStatement st,
                   db_.Prepare("UPDATE jobs SET state = ?, error_code = ?, error_message = ?, "
                               "finished_us = ?, telemetry = ? WHERE id = ?"));
  st.Bind(1, int64_t{state});
  st.Bind(2, int64_t{error_code});
  st.Bind(3, error_message);
  st.Bind(4, absl::ToUnixMicros(now));
  if (telemetry != nullptr) {
    st.BindBlob(5, telemetry->SerializeAsString());
  } else {
    st.BindNull(5);
  }
  st.Bind(6, id);
  return st.Run();
}

absl::Status JobStore::AppendEvent(const std::string& id, const v1::JobEvent& event) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(db_.Exec("BEGIN IMMEDIATE"));
  if (absl::Status s = AppendEventLocked(id, event); !s.ok()) {
    (void)db_.Exec("ROLLBACK");
    return s;
  }
  if (absl::Status s = db_.Exec("COMMIT"); !s.ok()) {
    (void)db_.Exec("ROLLBACK");
    return s;
  }
  return absl::OkStatus();
}

absl::Status JobStore::AppendEventLocked(const std::string& id, const v1::JobEvent& event) {
  ASSIGN_OR_RETURN(SqliteStatement next,
                   db_.Prepare("UPDATE jobs SET next_event = next_event + 1, results = results + ? "
                               "WHERE id = ? RETURNING seq, next_event - 1"));
  next.Bind(1, int64_t{event.has_row() || event.has_check() ? 1 : 0});
  next.Bind(2, id);
  ASSIGN_OR_RETURN(bool found, next.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("job ", id));
  const int64_t job_seq = next.Int(0), event_seq = next.Int(1);
  RETURN_IF_ERROR(next.Run());
  ASSIGN_OR_RETURN(SqliteStatement insert,
                   db_.Prepare("INSERT INTO events (job_seq, seq, event) VALUES (?, ?, ?)"));
  insert.Bind(1, job_seq);
  insert.Bind(2, event_seq);
  insert.BindBlob(3, event.SerializeAsString());
  return insert.Run();
}

absl::StatusOr<std::vector<v1::JobEvent>> JobStore::Events(const std::string& id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqliteStatement st,
                   db_.Prepare("SELECT e.event FROM events e JOIN jobs j ON e.job_seq = j.seq "
                               "WHERE j.id = ? ORDER BY e.seq"));
  st.Bind(1, id);
  std::vector<v1::JobEvent> events;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    if (!events.emplace_back().ParseFromString(st.Text(0))) {
      return absl::DataLossError(absl::StrCat("job ", id, ": a stored event is corrupt"));
    }
  }
  return events;
}

absl::StatusOr<std::vector<std::string>> JobStore::RecoverInterrupted(int max_attempts,
                                                                      absl::Time now) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqliteStatement running,
                   db_.Prepare("SELECT id, attempts FROM jobs WHERE state = ?"));
  running.Bind(1, int64_t{v1::JOB_STATE_RUNNING});
  std::vector<std::pair<std::string, int64_t>> interrupted;
  while (true) {
    ASSIGN_OR_RETURN(bool row, running.Step());
    if (!row) break;
    interrupted.emplace_back(running.Text(0), running.Int(1));
  }
  std::vector<std::string> requeued;
  for (const auto& [id, attempts] : interrupted) {
    ASSIGN_OR_RETURN(SqliteStatement st,
                     db_.Prepare("UPDATE jobs SET state = ?, error_code = ?, error_message = ?, "
                                 "finished_us = ? WHERE id = ?"));
    if (attempts < max_attempts) {
      st.Bind(1, int64_t{v1::JOB_STATE_QUEUED});
      st.Bind(2, int64_t{0});
      st.Bind(3, "");
      st.BindNull(4);
      requeued.push_back(id);
    } else {
      st.Bind(1, int64_t{v1::JOB_STATE_FAILED});
      st.Bind(2, static_cast<int64_t>(absl::StatusCode::kAborted));
      st.Bind(3, absl::StrFormat("gpuprobed stopped while the job ran, %d times; not retried "
                                 "again",
                                 attempts));
      st.Bind(4, absl::ToUnixMicros(now));
    }
    st.Bind(5, id);
    RETURN_IF_ERROR(st.Run());
  }
  return requeued;
}

}  // namespace gpuprobe
