#include "server/jobs/job_store.h"

#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "google/protobuf/util/time_util.h"

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

constexpr char kJobColumns[] =
    "seq, id, state, request, priority, submitter, created_us, started_us, finished_us, device, "
    "error_code, error_message, attempts, results, device_index";

google::protobuf::Timestamp Micros(int64_t us) { return TimeUtil::MicrosecondsToTimestamp(us); }

absl::StatusOr<v1::Job> JobFromRow(SqliteStatement& st) {
  v1::Job job;
  job.set_id(st.Text(1));
  job.set_state(static_cast<v1::JobState>(st.Int(2)));
  if (!job.mutable_request()->ParseFromString(st.Text(3))) {
    return absl::DataLossError(absl::StrCat("job ", job.id(), ": stored request is corrupt"));
  }
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
  return job;
}

const google::protobuf::Map<std::string, std::string>& LabelsOf(const v1::SubmitRequest& r) {
  return r.has_check() ? r.check().labels() : r.sweep().labels();
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobStore>> JobStore::Open(const std::string& data_dir) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("data-dir: cannot create ", data_dir, ": ", ec.message()));
  }
  ASSIGN_OR_RETURN(SqliteDb db, SqliteDb::Open(data_dir + "/gpuprobe.sqlite"));
  std::unique_ptr<JobStore> store(new JobStore(std::move(db)));
  RETURN_IF_ERROR(store->Migrate());
  return store;
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
  return absl::OkStatus();
}

absl::StatusOr<JobStore::Inserted> JobStore::Insert(const v1::SubmitRequest& request,
                                                    const std::string& submitter, absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (!request.idempotency_key().empty()) {
    ASSIGN_OR_RETURN(SqliteStatement find,
                     db_.Prepare("SELECT id FROM jobs WHERE idempotency_key = ?"));
    find.Bind(1, request.idempotency_key());
    ASSIGN_OR_RETURN(bool found, find.Step());
    if (found) {
      ASSIGN_OR_RETURN(v1::Job job, GetLocked(find.Text(0)));
      return Inserted{std::move(job), false};
    }
  }
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
    insert.Bind(5, request.idempotency_key());
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
  RETURN_IF_ERROR(db_.Exec("COMMIT"));
  ASSIGN_OR_RETURN(v1::Job job, GetLocked(id));
  return Inserted{std::move(job), true};
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
  ASSIGN_OR_RETURN(v1::Job job, JobFromRow(st));
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
  if (!request.page_token().empty() && !absl::SimpleAtoi(request.page_token(), &before_seq)) {
    return absl::InvalidArgumentError("page_token: not a token this server returned");
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
    ASSIGN_OR_RETURN(*response.add_jobs(), JobFromRow(st));
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
  ASSIGN_OR_RETURN(SqliteStatement st,
                   db_.Prepare(absl::StrCat("SELECT ", kJobColumns,
                                            " FROM jobs WHERE state = ? "
                                            "AND (pinned_device IS NULL OR pinned_device = ?) "
                                            "ORDER BY priority DESC, seq LIMIT 1")));
  st.Bind(1, int64_t{v1::JOB_STATE_QUEUED});
  st.Bind(2, int64_t{device});
  ASSIGN_OR_RETURN(bool found, st.Step());
  if (!found) return std::nullopt;
  ASSIGN_OR_RETURN(v1::Job job, JobFromRow(st));
  return job;
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
                                    const std::string& error_message, absl::Time now) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqliteStatement st,
                   db_.Prepare("UPDATE jobs SET state = ?, error_code = ?, error_message = ?, "
                               "finished_us = ? WHERE id = ?"));
  st.Bind(1, int64_t{state});
  st.Bind(2, int64_t{error_code});
  st.Bind(3, error_message);
  st.Bind(4, absl::ToUnixMicros(now));
  st.Bind(5, id);
  return st.Run();
}

absl::Status JobStore::AppendEvent(const std::string& id, const v1::JobEvent& event) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(db_.Exec("BEGIN IMMEDIATE"));
  ASSIGN_OR_RETURN(SqliteStatement next,
                   db_.Prepare("UPDATE jobs SET next_event = next_event + 1, results = results + ? "
                               "WHERE id = ? RETURNING seq, next_event - 1"));
  next.Bind(1, int64_t{event.has_row() || event.has_check() ? 1 : 0});
  next.Bind(2, id);
  absl::StatusOr<bool> found = next.Step();
  if (!found.ok() || !*found) {
    (void)db_.Exec("ROLLBACK");
    return found.ok() ? absl::NotFoundError(absl::StrCat("job ", id)) : found.status();
  }
  const int64_t job_seq = next.Int(0), event_seq = next.Int(1);
  (void)next.Run();
  ASSIGN_OR_RETURN(SqliteStatement insert,
                   db_.Prepare("INSERT INTO events (job_seq, seq, event) VALUES (?, ?, ?)"));
  insert.Bind(1, job_seq);
  insert.Bind(2, event_seq);
  insert.BindBlob(3, event.SerializeAsString());
  if (absl::Status s = insert.Run(); !s.ok()) {
    (void)db_.Exec("ROLLBACK");
    return s;
  }
  return db_.Exec("COMMIT");
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
