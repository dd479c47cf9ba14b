// JobStore on a SqlConnection: the store's one implementation of jobs, events, claims, leases
// and the fleet registry, whatever the database. SqliteJobStore and PostgresJobStore open,
// check and migrate their database, then hand it to this class.
//
// Thread-safe: one connection for jobs and events, its statements serialized by a mutex here.
// The fleet's calls (Register, Unregister, Heartbeat, RequeueExpired, ProbeWrite) take a
// connection of their own where one is given, so that job traffic never delays a heartbeat.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/store/job_store.h"
#include "server/store/sql_connection.h"

namespace gpuprobe {

// A time as the store's columns hold it: microseconds since the Unix epoch.
inline int64_t StoreMicros(absl::Time t) { return absl::ToUnixMicros(t); }

class SqlJobStore : public JobStore {
 public:
  // `kind`: "sqlite" or "postgresql"; `shared`: whether other daemons may use the database.
  // `listener`: a connection listening on kEventChannel and kQueueChannel (a shared store), or
  // null. `fleet`: the fleet calls' own connection, or null to share `db`.
  SqlJobStore(std::unique_ptr<SqlConnection> db, std::string kind, bool shared,
              std::unique_ptr<SqlConnection> listener = nullptr,
              std::unique_ptr<SqlConnection> fleet = nullptr)
      : db_(std::move(db)),
        listener_(std::move(listener)),
        fleet_db_(std::move(fleet)),
        kind_(std::move(kind)),
        shared_(shared) {}

  // Each stored event is announced on kEventChannel (payload: the job's id), each job queued
  // (new, or again) on kQueueChannel (AnnounceQueued): watchers follow the one, idle devices
  // the other.
  static constexpr char kEventChannel[] = "gpuprobe_events";
  static constexpr char kQueueChannel[] = "gpuprobe_queue";
  // How many daemons a queued job's announcement names.
  static constexpr int kClaimantsWoken = 2;

  std::string Kind() const override { return kind_; }
  bool Shared() const override { return shared_; }

  absl::StatusOr<std::optional<v1::Job>> FindByIdempotencyKey(const std::string& scope,
                                                              const std::string& key) override;
  absl::StatusOr<Inserted> Insert(
      const NewJob& job, const std::string& submitter, const std::string& key_scope, absl::Time now,
      const std::function<v1::JobEvent(const v1::Job&)>& first_event) override;
  absl::StatusOr<std::vector<v1::Job>> Unresolved() override;
  absl::Status SetResolved(const std::string& id, const std::string& probe,
                           const google::protobuf::Any& resolved, bool check) override;
  absl::StatusOr<v1::Module> PutModule(const NewModule& module, const ModuleQuota& quota,
                                       absl::Time now) override;
  absl::StatusOr<StoredModule> GetModule(const std::string& id, bool with_bytes) override;
  absl::Status ProbeWrite() override;
  absl::StatusOr<v1::Job> Get(const std::string& id) override;
  absl::StatusOr<v1::ListJobsResponse> List(const v1::ListJobsRequest& request) override;
  absl::StatusOr<int64_t> CountQueued() override;
  absl::StatusOr<Totals> CountTotals() override;
  absl::StatusOr<int64_t> CountQueuedOn(int device) override;
  absl::StatusOr<std::optional<Claimed>> ClaimNext(const DaemonRegistration& daemon,
                                                   const DeviceRegistration& device, absl::Time now,
                                                   absl::Time lease_until) override;
  absl::Status MarkFinished(const std::string& id, int attempt, const v1::JobEvent& finished,
                            absl::Time now, const v1::TelemetrySummary* telemetry) override;
  absl::StatusOr<bool> CancelQueued(const std::string& id, const v1::JobEvent& cancelled,
                                    absl::Time now) override;
  absl::Status RequestCancel(const std::string& id) override;
  absl::Status AppendEvent(const std::string& id, const v1::JobEvent& event) override;
  absl::StatusOr<std::vector<v1::JobEvent>> Events(const std::string& id, int64_t from) override;
  absl::Status Register(const DaemonRegistration& daemon, absl::Time now) override;
  absl::Status Unregister(const std::string& daemon_id) override;
  absl::StatusOr<std::vector<std::string>> Heartbeat(const std::string& daemon_id,
                                                     const std::vector<std::string>& running,
                                                     absl::Time now,
                                                     absl::Time lease_until) override;
  absl::StatusOr<Beat> HeartbeatAndSweep(const std::string& daemon_id,
                                         const std::vector<std::string>& running, absl::Time now,
                                         absl::Time lease_until, int max_attempts) override;
  absl::StatusOr<std::vector<v1::FleetDevice>> FleetDevices(absl::Time now,
                                                            absl::Duration lost_after) override;
  absl::StatusOr<std::vector<ExpiredLease>> RequeueExpired(int max_attempts,
                                                           absl::Time now) override;
  absl::StatusOr<StoreChanges> AwaitChanges(absl::Duration timeout,
                                            const std::string& daemon_id) override;

 private:
  // Runs `body` on the fleet calls' connection (its own, else the shared one under mu_).
  absl::Status OnFleetConnection(const std::function<absl::Status(SqlConnection& db)>& body);
  // Runs `body` in a write transaction on `db`: committed when it returns OK, else rolled back.
  static absl::Status InTransaction(SqlConnection& db, const std::function<absl::Status()>& body);
  absl::Status InTransaction(const std::function<absl::Status()>& body)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return InTransaction(*db_, body);
  }
  absl::StatusOr<std::optional<v1::Job>> FindByKeyLocked(const std::string& scope,
                                                         const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status AppendEventLocked(const std::string& id, const v1::JobEvent& event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<v1::Job> GetLocked(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes daemon `daemon` ("" for none), the earlier daemons of its host that served one of its
  // devices, and every daemon lost for 10 minutes (no heartbeat), with their devices, from the
  // registry.
  static absl::Status Forget(SqlConnection& db, const DaemonRegistration& daemon, absl::Time now);
  // Inside a transaction on `db`: Heartbeat's, ProbeWrite's and RequeueExpired's statements.
  static absl::StatusOr<std::vector<std::string>> RenewIn(SqlConnection& db,
                                                          const std::string& daemon_id,
                                                          const std::vector<std::string>& running,
                                                          absl::Time now, absl::Time lease_until);
  static absl::Status WriteProbeIn(SqlConnection& db);
  absl::StatusOr<std::vector<ExpiredLease>> RequeueExpiredIn(SqlConnection& db, int max_attempts,
                                                             absl::Time now) const;
  // Inside the transaction on `db` that queues job `job_id` (new, or again): announces it on
  // kQueueChannel to the kClaimantsWoken daemons with a device that may run it, idle devices'
  // daemons first, the most recent heartbeat first among them (dead daemons last), so that a
  // job wakes a few claimants, not the whole fleet. Payload: the job's id, then the daemons'
  // ids, space-separated. A job no registered device may run is announced to no one. A store
  // no other daemon shares (SQLite) announces nothing: its daemon wakes its own devices.
  absl::Status AnnounceQueued(SqlConnection& db, const std::string& job_id) const;
  absl::StatusOr<std::optional<StoredModule>> FindModuleLocked(const std::string& id,
                                                               bool with_bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Deletes unreferenced modules, least recently used first, until `needed` more bytes fit
  // `quota_bytes`; the bytes stored after.
  absl::StatusOr<int64_t> AgeOutModulesLocked(int64_t needed, int64_t quota_bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<int64_t> CountLocked(const std::string& sql, const std::vector<SqlValue>& params)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  const std::unique_ptr<SqlConnection> db_ ABSL_PT_GUARDED_BY(mu_);
  absl::Mutex listener_mu_;
  const std::unique_ptr<SqlConnection> listener_ ABSL_PT_GUARDED_BY(listener_mu_);
  absl::Mutex fleet_mu_;
  const std::unique_ptr<SqlConnection> fleet_db_ ABSL_PT_GUARDED_BY(fleet_mu_);
  const std::string kind_;
  const bool shared_;
};

}  // namespace gpuprobe
