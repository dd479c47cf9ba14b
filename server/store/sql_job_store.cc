#include "server/store/sql_job_store.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "google/protobuf/util/time_util.h"
#include "server/store/job_record.h"
#include "server/store/moe_union_rows.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

using google::protobuf::util::TimeUtil;

// Row `r` of a query that selected kJobColumns first.
v1::Job JobAt(const SqlRows& rows, size_t r) {
  JobColumns c;
  c.seq = rows.Int(r, 0);
  c.id = rows.Text(r, 1);
  c.state = rows.Int(r, 2);
  c.request = rows.Text(r, 3);
  c.priority = rows.Int(r, 4);
  c.submitter = rows.Text(r, 5);
  c.created_us = rows.Int(r, 6);
  c.started_us = rows.OptionalInt(r, 7);
  c.finished_us = rows.OptionalInt(r, 8);
  c.device = rows.Text(r, 9);
  c.error_code = rows.Int(r, 10);
  c.error_message = rows.Text(r, 11);
  c.attempts = rows.Int(r, 12);
  c.results = rows.Int(r, 13);
  c.device_index = rows.OptionalInt(r, 14);
  c.telemetry = rows.OptionalText(r, 15);
  c.host = rows.Text(r, 16);
  c.probe = rows.Text(r, 17);
  c.resolved = rows.OptionalText(r, 18);
  c.check = rows.Int(r, 19) != 0;
  return JobFromColumns(c);
}

SqlValue OptionalBlob(const v1::TelemetrySummary* telemetry) {
  if (telemetry == nullptr) return nullptr;
  return SqlBlob{telemetry->SerializeAsString()};
}

// A placeholder id, unique among concurrent inserts, until the row's seq names the job.
std::string PendingId() {
  return absl::StrFormat("pending-%d-%x", StoreMicros(absl::Now()),
                         absl::Uniform<uint64_t>(absl::BitGen()));
}

}  // namespace

absl::Status SqlJobStore::InTransaction(SqlConnection& db,
                                        const std::function<absl::Status()>& body) {
  RETURN_IF_ERROR(db.Begin());
  absl::Status s = body();
  if (s.ok()) s = db.Exec("COMMIT");
  if (!s.ok()) (void)db.Exec("ROLLBACK");
  return s;
}

absl::StatusOr<int64_t> SqlJobStore::CountLocked(const std::string& sql,
                                                 const std::vector<SqlValue>& params) {
  ASSIGN_OR_RETURN(SqlRows rows, db_->Query(sql, params));
  return rows.empty() ? 0 : rows.Int(0, 0);
}

absl::Status SqlJobStore::WriteProbeIn(SqlConnection& db) {
  // A row as large as a few events needs pages of its own: a full store refuses it.
  RETURN_IF_ERROR(
      db.Query("INSERT INTO write_probe (bytes) VALUES (?1)", {SqlBlob{std::string(8192, '\0')}})
          .status());
  return db.Query("DELETE FROM write_probe").status();
}

absl::Status SqlJobStore::ProbeWrite() {
  return OnFleetConnection(
      [](SqlConnection& db) { return InTransaction(db, [&] { return WriteProbeIn(db); }); });
}

absl::StatusOr<std::vector<v1::Job>> SqlJobStore::Unresolved() {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqlRows rows,
                   db_->Query(absl::StrCat("SELECT ", kJobColumns,
                                           " FROM jobs WHERE resolved IS NULL ORDER BY seq")));
  std::vector<v1::Job> jobs;
  for (size_t r = 0; r < rows.size(); ++r) jobs.push_back(JobAt(rows, r));
  return jobs;
}

absl::Status SqlJobStore::SetResolved(const std::string& id, const std::string& probe,
                                      const google::protobuf::Any& resolved, bool check) {
  absl::MutexLock lock(&mu_);
  return db_
      ->Query(
          "UPDATE jobs SET probe = ?1, resolved = ?2, is_check = ?3 "
          "WHERE id = ?4 AND resolved IS NULL",
          {probe, SqlBlob{resolved.SerializeAsString()}, int64_t{check ? 1 : 0}, id})
      .status();
}

absl::StatusOr<std::optional<v1::Job>> SqlJobStore::FindByIdempotencyKey(const std::string& scope,
                                                                         const std::string& key) {
  absl::MutexLock lock(&mu_);
  return FindByKeyLocked(scope, key);
}

absl::StatusOr<std::optional<v1::Job>> SqlJobStore::FindByKeyLocked(const std::string& scope,
                                                                    const std::string& key) {
  if (key.empty()) return std::nullopt;
  ASSIGN_OR_RETURN(SqlRows found, db_->Query("SELECT id FROM jobs WHERE idempotency_key = ?1",
                                             {ScopedKey(scope, key)}));
  if (found.empty()) return std::nullopt;
  ASSIGN_OR_RETURN(v1::Job job, GetLocked(found.Text(0, 0)));
  return job;
}

absl::StatusOr<JobStore::Inserted> SqlJobStore::Insert(
    const NewJob& job, const std::string& submitter, const std::string& key_scope, absl::Time now,
    const std::function<v1::JobEvent(const v1::Job&)>& first_event) {
  const v1::SubmitRequest& request = job.request;
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(std::optional<v1::Job> earlier,
                   FindByKeyLocked(key_scope, request.idempotency_key()));
  if (earlier.has_value()) return Inserted{*std::move(earlier), false};
  Inserted inserted;
  absl::Status s = InTransaction([&]() -> absl::Status {
    SqlValue key = nullptr;
    if (!request.idempotency_key().empty()) {
      key = ScopedKey(key_scope, request.idempotency_key());
    }
    SqlValue pinned = nullptr;
    if (request.has_device()) pinned = int64_t{request.device()};
    // Another daemon of a fleet may have stored the same key since the lookup: nothing is
    // inserted then, and its job is the answer.
    ASSIGN_OR_RETURN(
        SqlRows created,
        db_->Query("INSERT INTO jobs (id, state, request, priority, submitter, idempotency_key, "
                   "created_us, pinned_device, target_gpu, target_host, probe, resolved, "
                   "is_check) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
                   "ON CONFLICT (idempotency_key) DO NOTHING RETURNING seq",
                   {PendingId(), int64_t{v1::JOB_STATE_QUEUED},
                    SqlBlob{request.SerializeAsString()}, int64_t{request.priority()}, submitter,
                    key, StoreMicros(now), pinned, request.gpu(), request.host(), job.probe,
                    SqlBlob{job.resolved.SerializeAsString()}, int64_t{job.check ? 1 : 0}}));
    if (created.empty()) {
      ASSIGN_OR_RETURN(std::optional<v1::Job> other,
                       FindByKeyLocked(key_scope, request.idempotency_key()));
      if (!other.has_value()) return absl::InternalError("idempotency_key: conflict without a job");
      inserted.job = *std::move(other);
      return absl::CancelledError();  // rolls back the empty transaction
    }
    const int64_t seq = created.Int(0, 0);
    const std::string id = absl::StrCat("job-", seq);
    RETURN_IF_ERROR(db_->Query("UPDATE jobs SET id = ?1 WHERE seq = ?2", {id, seq}).status());
    for (const auto& [label, value] : LabelsOf(request)) {
      RETURN_IF_ERROR(db_->Query("INSERT INTO job_labels (job_seq, key, value) VALUES (?1, ?2, ?3)",
                                 {seq, label, value})
                          .status());
    }
    for (const std::string& module : job.modules) {
      ASSIGN_OR_RETURN(SqlRows used, db_->Query("UPDATE modules SET used_us = ?2 WHERE id = ?1 "
                                                "RETURNING id",
                                                {module, StoreMicros(now)}));
      if (used.empty()) {
        return absl::NotFoundError(
            absl::StrCat("module ", module,
                         " is not stored (aged out since it was uploaded?): upload it again"));
      }
      RETURN_IF_ERROR(
          db_->Query("INSERT INTO job_modules (job_seq, module_id) VALUES (?1, ?2)", {seq, module})
              .status());
    }
    ASSIGN_OR_RETURN(inserted.job, GetLocked(id));
    inserted.created = true;
    RETURN_IF_ERROR(AnnounceQueued(*db_, id));
    return AppendEventLocked(id, first_event(inserted.job));
  });
  if (!s.ok() && !(absl::IsCancelled(s) && !inserted.job.id().empty())) return s;
  return inserted;
}

absl::StatusOr<v1::Job> SqlJobStore::Get(const std::string& id) {
  absl::MutexLock lock(&mu_);
  return GetLocked(id);
}

absl::StatusOr<v1::Job> SqlJobStore::GetLocked(const std::string& id) {
  ASSIGN_OR_RETURN(
      SqlRows rows,
      db_->Query(absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE id = ?1"), {id}));
  if (rows.empty()) return absl::NotFoundError(absl::StrCat("job_id: no job \"", id, "\""));
  v1::Job job = JobAt(rows, 0);
  if (job.state() == v1::JOB_STATE_QUEUED) {
    const int64_t priority = rows.Int(0, 4);
    ASSIGN_OR_RETURN(const int64_t ahead,
                     CountLocked("SELECT COUNT(*) FROM jobs WHERE state = ?1 OR (state = ?2 AND "
                                 "(priority > ?3 OR (priority = ?3 AND seq < ?4)))",
                                 {int64_t{v1::JOB_STATE_RUNNING}, int64_t{v1::JOB_STATE_QUEUED},
                                  priority, rows.Int(0, 0)}));
    job.set_queue_position(static_cast<uint32_t>(ahead));
  }
  return job;
}

absl::StatusOr<v1::ListJobsResponse> SqlJobStore::List(const v1::ListJobsRequest& request) {
  ASSIGN_OR_RETURN(ListPage page, CheckListRequest(request));
  std::vector<SqlValue> params = {page.before_seq};
  std::string sql = absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE seq < ?1");
  std::vector<std::string> states;
  for (int state : request.states()) states.push_back(absl::StrCat(state));
  if (!states.empty()) absl::StrAppend(&sql, " AND state IN (", absl::StrJoin(states, ","), ")");
  auto param = [&](SqlValue value) {
    params.push_back(std::move(value));
    return absl::StrCat("?", params.size());
  };
  if (request.has_created_after()) {
    absl::StrAppend(&sql, " AND created_us >= ",
                    param(TimeUtil::TimestampToMicroseconds(request.created_after())));
  }
  if (request.has_created_before()) {
    absl::StrAppend(&sql, " AND created_us < ",
                    param(TimeUtil::TimestampToMicroseconds(request.created_before())));
  }
  for (const auto& [key, value] : request.labels()) {
    const std::string k = param(key);
    absl::StrAppend(&sql,
                    " AND EXISTS (SELECT 1 FROM job_labels l WHERE l.job_seq = jobs.seq "
                    "AND l.key = ",
                    k, " AND l.value = ", param(value), ")");
  }
  // One more row than the page tells whether another page exists.
  absl::StrAppend(&sql, " ORDER BY seq DESC LIMIT ", param(page.size + 1));

  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqlRows rows, db_->Query(sql, params));
  v1::ListJobsResponse response;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (response.jobs_size() == page.size) {
      response.set_next_page_token(absl::StrCat(rows.Int(r - 1, 0)));
      break;
    }
    *response.add_jobs() = JobAt(rows, r);
  }
  return response;
}

absl::StatusOr<int64_t> SqlJobStore::CountQueued() {
  absl::MutexLock lock(&mu_);
  return CountLocked("SELECT COUNT(*) FROM jobs WHERE state = ?1", {int64_t{v1::JOB_STATE_QUEUED}});
}

absl::StatusOr<JobStore::Totals> SqlJobStore::CountTotals() {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqlRows rows,
                   db_->Query("SELECT state, COUNT(*), SUM(results) FROM jobs GROUP BY state"));
  Totals totals;
  for (size_t r = 0; r < rows.size(); ++r) {
    totals.jobs_by_state[static_cast<v1::JobState>(rows.Int(r, 0))] = rows.Int(r, 1);
    totals.results += rows.Int(r, 2);
  }
  return totals;
}

absl::StatusOr<int64_t> SqlJobStore::CountQueuedOn(int device) {
  absl::MutexLock lock(&mu_);
  return CountLocked("SELECT COUNT(*) FROM jobs WHERE state = ?1 AND pinned_device = ?2",
                     {int64_t{v1::JOB_STATE_QUEUED}, int64_t{device}});
}

absl::StatusOr<std::optional<JobStore::Claimed>> SqlJobStore::ClaimNext(
    const DaemonRegistration& daemon, const DeviceRegistration& device, absl::Time now,
    absl::Time lease_until) {
  absl::MutexLock lock(&mu_);
  std::optional<Claimed> claimed;
  RETURN_IF_ERROR(InTransaction([&]() -> absl::Status {
    while (true) {
      ASSIGN_OR_RETURN(SqlRows next,
                       db_->Query(absl::StrCat("SELECT ", kJobColumns,
                                               " FROM jobs WHERE state = ?1 "
                                               "AND (pinned_device IS NULL OR pinned_device = ?2) "
                                               "AND (target_gpu = '' OR target_gpu = ?3) "
                                               "AND (target_host = '' OR target_host = ?4) "
                                               "ORDER BY priority DESC, seq LIMIT 1",
                                               db_->LockRowsClause()),
                                  {int64_t{v1::JOB_STATE_QUEUED}, int64_t{device.index},
                                   device.model, daemon.host}));
      if (next.empty()) return absl::OkStatus();
      v1::Job job = JobAt(next, 0);
      if (HasCorruptRequest(job)) {
        // Quarantine: fail it once, so it is never picked (nor logged) again.
        spdlog::error("job {}: {}", job.id(), kCorruptRequest);
        RETURN_IF_ERROR(db_->Query("UPDATE jobs SET state = ?1, error_code = ?2, "
                                   "error_message = ?3, finished_us = ?4 WHERE id = ?5",
                                   {int64_t{v1::JOB_STATE_FAILED},
                                    static_cast<int64_t>(absl::StatusCode::kDataLoss),
                                    std::string(kCorruptRequest), StoreMicros(now), job.id()})
                            .status());
        continue;
      }
      ASSIGN_OR_RETURN(
          SqlRows attempt,
          db_->Query("UPDATE jobs SET state = ?1, device = ?2, started_us = ?3, "
                     "attempts = attempts + 1, results = 0, device_index = ?4, host = ?5, "
                     "lease_owner = ?6, lease_expires_us = ?7, cancel_requested = 0 "
                     "WHERE id = ?8 RETURNING attempts",
                     {int64_t{v1::JOB_STATE_RUNNING}, device.description, StoreMicros(now),
                      int64_t{device.index}, daemon.host, daemon.daemon_id,
                      StoreMicros(lease_until), job.id()}));
      if (attempt.empty()) return absl::InternalError("claim: the job vanished");
      // The device is no longer idle for announcements (AnnounceQueued)...
      RETURN_IF_ERROR(db_->Query("UPDATE devices SET running_job = ?1 "
                                 "WHERE daemon_id = ?2 AND device_index = ?3",
                                 {job.id(), daemon.daemon_id, int64_t{device.index}})
                          .status());
      // ...and the next queued job, if any, was announced to devices that may have been taken
      // since (this one among them): announced again, it wakes another claimant.
      ASSIGN_OR_RETURN(SqlRows behind, db_->Query("SELECT id FROM jobs WHERE state = ?1 AND "
                                                  "id <> ?2 ORDER BY priority DESC, seq LIMIT 1",
                                                  {int64_t{v1::JOB_STATE_QUEUED}, job.id()}));
      if (!behind.empty()) RETURN_IF_ERROR(AnnounceQueued(*db_, behind.Text(0, 0)));
      Claimed c{.job = std::move(job), .attempt = static_cast<int>(attempt.Int(0, 0))};
      c.job.set_state(v1::JOB_STATE_RUNNING);
      c.job.set_attempts(c.attempt);
      c.job.set_device(device.description);
      c.job.set_device_index(device.index);
      c.job.set_host(daemon.host);
      *c.job.mutable_started_at() = TimeUtil::MicrosecondsToTimestamp(StoreMicros(now));
      claimed = std::move(c);
      return absl::OkStatus();
    }
  }));
  return claimed;
}

absl::Status SqlJobStore::MarkFinished(const std::string& id, int attempt,
                                       const v1::JobEvent& finished, absl::Time now,
                                       const v1::TelemetrySummary* telemetry) {
  absl::MutexLock lock(&mu_);
  const v1::JobFinished& f = finished.finished();
  auto end = [&](bool with_event) -> absl::Status {
    ASSIGN_OR_RETURN(SqlRows ended,
                     db_->Query("UPDATE jobs SET state = ?1, error_code = ?2, error_message = ?3, "
                                "finished_us = ?4, telemetry = ?5, lease_owner = '' "
                                "WHERE id = ?6 AND attempts = ?7 AND state = ?8 RETURNING seq",
                                {int64_t{f.state()}, int64_t{f.error_code()}, f.error_message(),
                                 StoreMicros(now), OptionalBlob(telemetry), id, int64_t{attempt},
                                 int64_t{v1::JOB_STATE_RUNNING}}));
    if (ended.empty()) return absl::AbortedError(LeaseLost(id, attempt));
    // The device idle again for announcements (AnnounceQueued). The job's row, then the
    // device's: a heartbeat takes the two in that order too, so they never wait on each other.
    RETURN_IF_ERROR(
        db_->Query("UPDATE devices SET running_job = '' WHERE running_job = ?1", {id}).status());
    return with_event ? AppendEventLocked(id, finished) : absl::OkStatus();
  };
  absl::Status s = InTransaction([&] { return end(true); });
  if (absl::IsResourceExhausted(s)) {
    // A full store still takes the end in place, in the record: watchers and replays make the
    // finished event from it.
    s = InTransaction([&] { return end(false); });
  }
  return s;
}

absl::StatusOr<bool> SqlJobStore::CancelQueued(const std::string& id, const v1::JobEvent& cancelled,
                                               absl::Time now) {
  absl::MutexLock lock(&mu_);
  bool was_queued = false;
  const v1::JobFinished& f = cancelled.finished();
  RETURN_IF_ERROR(InTransaction([&]() -> absl::Status {
    ASSIGN_OR_RETURN(SqlRows ended,
                     db_->Query("UPDATE jobs SET state = ?1, error_code = ?2, error_message = ?3, "
                                "finished_us = ?4 WHERE id = ?5 AND state = ?6 RETURNING seq",
                                {int64_t{f.state()}, int64_t{f.error_code()}, f.error_message(),
                                 StoreMicros(now), id, int64_t{v1::JOB_STATE_QUEUED}}));
    was_queued = !ended.empty();
    return was_queued ? AppendEventLocked(id, cancelled) : absl::OkStatus();
  }));
  return was_queued;
}

absl::Status SqlJobStore::RequestCancel(const std::string& id) {
  absl::MutexLock lock(&mu_);
  return db_
      ->Query("UPDATE jobs SET cancel_requested = 1 WHERE id = ?1 AND state = ?2",
              {id, int64_t{v1::JOB_STATE_RUNNING}})
      .status();
}

absl::Status SqlJobStore::AppendEvent(const std::string& id, const v1::JobEvent& event) {
  absl::MutexLock lock(&mu_);
  return InTransaction([&] { return AppendEventLocked(id, event); });
}

absl::Status SqlJobStore::AppendEventLocked(const std::string& id, const v1::JobEvent& event) {
  std::vector<SqlValue> params = {int64_t{IsResultEvent(event) ? 1 : 0}, id};
  std::string sql =
      "UPDATE jobs SET next_event = next_event + 1, results = results + ?1 WHERE id = ?2";
  // An attempt's event: only while that attempt runs (a finished event is stored with the
  // end, by MarkFinished, before the state changes here).
  const bool of_attempt = event.attempt() > 0 && !event.has_finished();
  if (of_attempt) {
    absl::StrAppend(&sql, " AND state = ?3 AND attempts = ?4");
    params.push_back(int64_t{v1::JOB_STATE_RUNNING});
    params.push_back(int64_t{event.attempt()});
  }
  absl::StrAppend(&sql, " RETURNING seq, next_event - 1");
  ASSIGN_OR_RETURN(SqlRows next, db_->Query(sql, params));
  if (next.empty()) {
    if (of_attempt && GetLocked(id).ok()) {
      return absl::AbortedError(LeaseLost(id, static_cast<int>(event.attempt())));
    }
    return absl::NotFoundError(absl::StrCat("job ", id));
  }
  RETURN_IF_ERROR(db_->Query("INSERT INTO events (job_seq, seq, event) VALUES (?1, ?2, ?3)",
                             {next.Int(0, 0), next.Int(0, 1), SqlBlob{event.SerializeAsString()}})
                      .status());
  return db_->Notify(kEventChannel, id);
}

absl::StatusOr<std::vector<v1::JobEvent>> SqlJobStore::Events(const std::string& id, int64_t from) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqlRows rows,
                   db_->Query("SELECT e.event FROM events e JOIN jobs j ON e.job_seq = j.seq "
                              "WHERE j.id = ?1 AND e.seq >= ?2 ORDER BY e.seq",
                              {id, from}));
  std::vector<v1::JobEvent> events(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    if (!events[r].ParseFromString(rows.Text(r, 0))) {
      return absl::DataLossError(absl::StrCat("job ", id, ": a stored event is corrupt"));
    }
    events[r] = UpgradedEvent(std::move(events[r]));
  }
  return events;
}

absl::StatusOr<StoreChanges> SqlJobStore::AwaitChanges(absl::Duration timeout,
                                                       const std::string& daemon_id) {
  StoreChanges changes;
  if (listener_ == nullptr) {
    absl::SleepFor(timeout);
    return changes;
  }
  absl::MutexLock lock(&listener_mu_);
  ASSIGN_OR_RETURN(std::vector<SqlConnection::Notification> heard,
                   listener_->AwaitNotifications(timeout));
  for (const SqlConnection::Notification& n : heard) {
    if (n.channel == kQueueChannel) {
      // "JOB DAEMON..." (AnnounceQueued); a bare job id (an earlier gpuprobed's) names everyone.
      const std::vector<absl::string_view> words = absl::StrSplit(n.payload, ' ');
      changes.queued |=
          words.size() == 1 || std::find(words.begin() + 1, words.end(), daemon_id) != words.end();
    }
    if (n.channel != kEventChannel) continue;
    if (n.payload.empty()) {
      changes.every_job = true;
    } else {
      changes.job_ids.insert(n.payload);
    }
  }
  return changes;
}

}  // namespace gpuprobe
