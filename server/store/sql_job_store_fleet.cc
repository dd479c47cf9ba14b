// SqlJobStore's fleet side: the daemons' registry (register, heartbeat, leave), the fleet's
// devices, and the leases of running jobs that ran out; a daemon's beat does its renewal, the
// store's test write and the look for expired leases in one transaction.
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "google/protobuf/util/time_util.h"
#include "server/store/job_record.h"
#include "server/store/sql_job_store.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

using google::protobuf::util::TimeUtil;

// Registry entries of daemons silent this long are removed when another daemon registers.
constexpr absl::Duration kForgetLostDaemonsAfter = absl::Minutes(10);

// Why a running job's lease expired, for its log line and, on its last attempt, its failure:
// whose it was, how long ago it ran out, and whether that daemon still heartbeats.
std::string LeaseExpiry(const std::string& owner, int64_t expired_us,
                        std::optional<int64_t> owner_heartbeat_us, absl::Time now) {
  if (expired_us == 0) return absl::StrCat("its gpuprobed ", owner, " stopped while the job ran");
  const auto seconds_ago = [&](int64_t us) {
    return absl::StrFormat("%.1f s", absl::ToDoubleSeconds(now - absl::FromUnixMicros(us)));
  };
  std::string reason = absl::StrCat("its lease, held by ", owner, ", expired ",
                                    seconds_ago(expired_us), " ago without renewal");
  if (!owner_heartbeat_us.has_value()) {
    absl::StrAppend(&reason, " (that daemon has left the fleet registry)");
  } else if (*owner_heartbeat_us > expired_us) {
    absl::StrAppend(&reason, " (that daemon still heartbeats, ", seconds_ago(*owner_heartbeat_us),
                    " ago, but did not renew this job)");
  } else {
    absl::StrAppend(&reason, " (that daemon's last heartbeat was ",
                    seconds_ago(*owner_heartbeat_us), " ago)");
  }
  return reason;
}

}  // namespace

absl::Status SqlJobStore::OnFleetConnection(
    const std::function<absl::Status(SqlConnection& db)>& body) {
  if (fleet_db_ == nullptr) {
    absl::MutexLock lock(&mu_);
    return body(*db_);
  }
  absl::MutexLock lock(&fleet_mu_);
  return body(*fleet_db_);
}

absl::Status SqlJobStore::Forget(SqlConnection& db, const DaemonRegistration& daemon,
                                 absl::Time now) {
  const int64_t forget_before = StoreMicros(now - kForgetLostDaemonsAfter);
  std::vector<std::string> forgotten = {daemon.daemon_id};
  for (const DeviceRegistration& device : daemon.devices) {
    ASSIGN_OR_RETURN(SqlRows same,
                     db.Query("SELECT d.id FROM daemons d JOIN devices v ON v.daemon_id = d.id "
                              "WHERE d.host = ?1 AND v.device_index = ?2 AND d.id <> ?3",
                              {daemon.host, int64_t{device.index}, daemon.daemon_id}));
    for (size_t r = 0; r < same.size(); ++r) forgotten.push_back(same.Text(r, 0));
  }
  for (const std::string& id : forgotten) {
    RETURN_IF_ERROR(db.Query("DELETE FROM devices WHERE daemon_id = ?1", {id}).status());
    RETURN_IF_ERROR(db.Query("DELETE FROM daemons WHERE id = ?1", {id}).status());
  }
  RETURN_IF_ERROR(db.Query("DELETE FROM devices WHERE daemon_id IN "
                           "(SELECT id FROM daemons WHERE heartbeat_us < ?1)",
                           {forget_before})
                      .status());
  return db.Query("DELETE FROM daemons WHERE heartbeat_us < ?1", {forget_before}).status();
}

absl::Status SqlJobStore::Register(const DaemonRegistration& daemon, absl::Time now) {
  return OnFleetConnection([&](SqlConnection& db) {
    return InTransaction(db, [&]() -> absl::Status {
      RETURN_IF_ERROR(Forget(db, daemon, now));
      RETURN_IF_ERROR(db.Query("INSERT INTO daemons (id, host, started_us, heartbeat_us) "
                               "VALUES (?1, ?2, ?3, ?3)",
                               {daemon.daemon_id, daemon.host, StoreMicros(now)})
                          .status());
      for (const DeviceRegistration& d : daemon.devices) {
        RETURN_IF_ERROR(
            db.Query("INSERT INTO devices (daemon_id, device_index, model, description, "
                     "calibrated_read_tbps) VALUES (?1, ?2, ?3, ?4, ?5)",
                     {daemon.daemon_id, int64_t{d.index}, d.model, d.description,
                      d.calibrated_read_tbps})
                .status());
      }
      return absl::OkStatus();
    });
  });
}

absl::Status SqlJobStore::Unregister(const std::string& daemon_id) {
  return OnFleetConnection([&](SqlConnection& db) {
    return InTransaction(db, [&]() -> absl::Status {
      RETURN_IF_ERROR(db.Query("DELETE FROM devices WHERE daemon_id = ?1", {daemon_id}).status());
      RETURN_IF_ERROR(db.Query("DELETE FROM daemons WHERE id = ?1", {daemon_id}).status());
      // Jobs it leaves running (interrupted by its shutdown) may be taken over at once.
      return db
          .Query("UPDATE jobs SET lease_expires_us = 0 WHERE lease_owner = ?1 AND state = ?2",
                 {daemon_id, int64_t{v1::JOB_STATE_RUNNING}})
          .status();
    });
  });
}

absl::StatusOr<std::vector<std::string>> SqlJobStore::RenewIn(
    SqlConnection& db, const std::string& daemon_id, const std::vector<std::string>& running,
    absl::Time now, absl::Time lease_until) {
  ASSIGN_OR_RETURN(SqlRows known, db.Query("UPDATE daemons SET heartbeat_us = ?1 "
                                           "WHERE id = ?2 RETURNING id",
                                           {StoreMicros(now), daemon_id}));
  if (known.empty()) {
    return absl::NotFoundError(absl::StrCat("daemon ", daemon_id, " is not registered"));
  }
  std::vector<std::string> cancels;
  for (size_t i = 0; i < running.size(); ++i) {
    // The job's row, then the device's, as MarkFinished takes them.
    if (!running[i].empty()) {
      // Only jobs the daemon still runs: one whose end it could not store stays unrenewed, so
      // that it is queued again once its lease expires.
      ASSIGN_OR_RETURN(SqlRows job,
                       db.Query("UPDATE jobs SET lease_expires_us = ?1 WHERE id = ?2 AND "
                                "lease_owner = ?3 AND state = ?4 RETURNING cancel_requested",
                                {StoreMicros(lease_until), running[i], daemon_id,
                                 int64_t{v1::JOB_STATE_RUNNING}}));
      if (!job.empty() && job.Int(0, 0) != 0) cancels.push_back(running[i]);
    }
    RETURN_IF_ERROR(db.Query("UPDATE devices SET running_job = ?1 "
                             "WHERE daemon_id = ?2 AND device_index = ?3",
                             {running[i], daemon_id, static_cast<int64_t>(i)})
                        .status());
  }
  return cancels;
}

absl::StatusOr<std::vector<std::string>> SqlJobStore::Heartbeat(
    const std::string& daemon_id, const std::vector<std::string>& running, absl::Time now,
    absl::Time lease_until) {
  std::vector<std::string> cancels;
  RETURN_IF_ERROR(OnFleetConnection([&](SqlConnection& db) {
    return InTransaction(db, [&]() -> absl::Status {
      ASSIGN_OR_RETURN(cancels, RenewIn(db, daemon_id, running, now, lease_until));
      return absl::OkStatus();
    });
  }));
  return cancels;
}

absl::StatusOr<JobStore::Beat> SqlJobStore::HeartbeatAndSweep(
    const std::string& daemon_id, const std::vector<std::string>& running, absl::Time now,
    absl::Time lease_until, int max_attempts) {
  Beat beat;
  RETURN_IF_ERROR(OnFleetConnection([&](SqlConnection& db) {
    beat = Beat{};
    return InTransaction(db, [&]() -> absl::Status {
      ASSIGN_OR_RETURN(beat.cancels, RenewIn(db, daemon_id, running, now, lease_until));
      // The test write in a savepoint of its own: a store too full for it keeps the renewal.
      RETURN_IF_ERROR(db.Exec("SAVEPOINT write_probe"));
      beat.writable = WriteProbeIn(db);
      RETURN_IF_ERROR(db.Exec(beat.writable.ok() ? "RELEASE SAVEPOINT write_probe"
                                                 : "ROLLBACK TO SAVEPOINT write_probe"));
      ASSIGN_OR_RETURN(beat.expired, RequeueExpiredIn(db, max_attempts, now));
      return absl::OkStatus();
    });
  }));
  return beat;
}

absl::StatusOr<std::vector<v1::FleetDevice>> SqlJobStore::FleetDevices(absl::Time now,
                                                                       absl::Duration lost_after) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqlRows rows,
                   db_->Query("SELECT d.host, v.daemon_id, v.device_index, v.model, v.description, "
                              "v.calibrated_read_tbps, v.running_job, d.heartbeat_us "
                              "FROM devices v JOIN daemons d ON v.daemon_id = d.id "
                              "ORDER BY d.host, v.daemon_id, v.device_index"));
  std::vector<v1::FleetDevice> fleet(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    v1::FleetDevice& f = fleet[r];
    f.set_host(rows.Text(r, 0));
    f.set_daemon_id(rows.Text(r, 1));
    f.set_index(static_cast<uint32_t>(rows.Int(r, 2)));
    f.set_model(rows.Text(r, 3));
    f.set_description(rows.Text(r, 4));
    f.set_calibrated_read_tbps(rows.Double(r, 5));
    const int64_t heartbeat = rows.Int(r, 7);
    *f.mutable_heartbeat_at() = TimeUtil::MicrosecondsToTimestamp(heartbeat);
    const bool lost = heartbeat < StoreMicros(now - lost_after);
    f.set_state(lost ? "lost" : "serving");
    // A lost daemon runs nothing anyone can vouch for: its job's lease lapses and the job is
    // queued again or ended.
    if (!lost) f.set_running_job_id(rows.Text(r, 6));
  }
  return fleet;
}

absl::StatusOr<std::vector<ExpiredLease>> SqlJobStore::RequeueExpiredIn(SqlConnection& db,
                                                                        int max_attempts,
                                                                        absl::Time now) const {
  std::vector<ExpiredLease> expired;
  RETURN_IF_ERROR(Forget(db, {}, now));
  const SqlValue running = int64_t{v1::JOB_STATE_RUNNING};
  ASSIGN_OR_RETURN(SqlRows jobs,
                   db.Query(absl::StrCat("SELECT id, attempts, lease_owner, lease_expires_us, "
                                         "cancel_requested FROM jobs WHERE state = ?1 AND "
                                         "lease_expires_us < ?2 ORDER BY seq",
                                         db.LockRowsClause()),
                            {running, StoreMicros(now)}));
  for (size_t r = 0; r < jobs.size(); ++r) {
    ExpiredLease lease{.job_id = jobs.Text(r, 0)};
    const int64_t attempts = jobs.Int(r, 1);
    const std::string owner = jobs.Text(r, 2);
    ASSIGN_OR_RETURN(SqlRows beat,
                     db.Query("SELECT heartbeat_us FROM daemons WHERE id = ?1", {owner}));
    lease.reason = LeaseExpiry(owner, jobs.Int(r, 3),
                               beat.empty() ? std::nullopt : beat.OptionalInt(0, 0), now);
    absl::StatusCode code = absl::StatusCode::kOk;
    v1::JobState state = v1::JOB_STATE_QUEUED;
    std::string message;
    if (jobs.Int(r, 4) != 0) {  // a cancel asked for meanwhile ends the job instead
      state = v1::JOB_STATE_CANCELLED;
      code = absl::StatusCode::kCancelled;
      message = absl::StrCat("cancelled; ", lease.reason);
    } else if (attempts >= max_attempts) {
      state = v1::JOB_STATE_FAILED;
      code = absl::StatusCode::kAborted;
      message = absl::StrCat(lease.reason, "; it ran ", attempts, " times, not run again");
    }
    lease.queued_again = state == v1::JOB_STATE_QUEUED;
    RETURN_IF_ERROR(db.Query("UPDATE jobs SET state = ?1, error_code = ?2, error_message = ?3, "
                             "finished_us = ?4, lease_owner = '' WHERE id = ?5",
                             {int64_t{state}, static_cast<int64_t>(code), message,
                              lease.queued_again ? SqlValue(nullptr) : SqlValue(StoreMicros(now)),
                              lease.job_id})
                        .status());
    if (lease.queued_again) RETURN_IF_ERROR(AnnounceQueued(db, lease.job_id));
    expired.push_back(std::move(lease));
  }
  return expired;
}

absl::Status SqlJobStore::AnnounceQueued(SqlConnection& db, const std::string& job_id) const {
  if (!shared_) return absl::OkStatus();
  // A device is idle when it runs no job: a claim sets running_job, the job's end clears it,
  // and each heartbeat writes what its daemon runs.
  ASSIGN_OR_RETURN(SqlRows claimants,
                   db.Query("SELECT d.id FROM devices v JOIN daemons d ON v.daemon_id = d.id "
                            "JOIN jobs j ON j.id = ?1 "
                            "WHERE (j.pinned_device IS NULL OR j.pinned_device = v.device_index) "
                            "AND (j.target_gpu = '' OR j.target_gpu = v.model) "
                            "AND (j.target_host = '' OR j.target_host = d.host) "
                            "GROUP BY d.id, d.heartbeat_us "
                            "ORDER BY MAX(CASE WHEN v.running_job = '' THEN 1 ELSE 0 END) DESC, "
                            "d.heartbeat_us DESC LIMIT ?2",
                            {job_id, int64_t{kClaimantsWoken}}));
  if (claimants.empty()) return absl::OkStatus();
  std::string payload = job_id;
  for (size_t r = 0; r < claimants.size(); ++r)
    absl::StrAppend(&payload, " ", claimants.Text(r, 0));
  return db.Notify(kQueueChannel, payload);
}

absl::StatusOr<std::vector<ExpiredLease>> SqlJobStore::RequeueExpired(int max_attempts,
                                                                      absl::Time now) {
  std::vector<ExpiredLease> expired;
  RETURN_IF_ERROR(OnFleetConnection([&](SqlConnection& db) {
    return InTransaction(db, [&]() -> absl::Status {
      ASSIGN_OR_RETURN(expired, RequeueExpiredIn(db, max_attempts, now));
      return absl::OkStatus();
    });
  }));
  return expired;
}

}  // namespace gpuprobe
