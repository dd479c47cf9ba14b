// The durable record of jobs, their events and the daemons that run them: the seam between the
// job manager and a database. Two implementations share one versioned schema:
//   SqliteJobStore   - one file under the data directory, one daemon (the default);
//   PostgresJobStore - a PostgreSQL database shared by a fleet of daemons.
// A job is stored before Submit answers and every event before it is streamed, so a crash loses
// nothing that a client was told.
//
// Jobs wait in the store. A daemon's device claims the next job that matches it (pinned device,
// gpu model, host), highest priority first, then oldest; the claim holds a lease that the
// daemon's heartbeat renews. A job whose lease expired (its daemon was killed or lost) is queued
// again, or failed after `max_attempts`; the daemon that lost the lease can no longer store the
// job's events, so a job never runs on two devices at once.
//
// Implementations are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "google/protobuf/any.pb.h"
#include "gpuprobe/v1/module.pb.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

// One device of a daemon, as it asks for work and as the fleet registry shows it.
struct DeviceRegistration {
  int index = 0;
  std::string model;  // DeviceDetails.name: what SubmitRequest.gpu names
  std::string description;
  double calibrated_read_tbps = 0.0;
};

// A running daemon: unique per start.
struct DaemonRegistration {
  std::string daemon_id;
  std::string host;
  std::vector<DeviceRegistration> devices;
};

// What other daemons of a shared store announced while AwaitChanges waited.
struct StoreChanges {
  bool queued = false;     // a job was queued (new, or again) naming this daemon: it looks for it
  bool every_job = false;  // events of any job may have been stored (announcements lost)
  std::set<std::string> job_ids;  // jobs with new events
  bool empty() const { return !queued && !every_job && job_ids.empty(); }
};

// A running job whose lease expired, as RequeueExpired found it.
struct ExpiredLease {
  std::string job_id;
  bool queued_again = false;  // else failed: it had run max_attempts times
  std::string reason;         // whose lease, how late its renewal was
};

// A job as Submit accepted it: the request as submitted and what its probe resolved it to.
struct NewJob {
  v1::SubmitRequest request;
  std::string probe;               // the probe's name
  google::protobuf::Any resolved;  // the probe's resolved spec (Probe::Resolve)
  bool check = false;              // the probe's exactness check
  // The modules the job names (Probe::Modules): each must be stored, and is kept while the job
  // is queued or running.
  std::vector<std::string> modules;
};

// A module upload as InspectModule read it, with its bytes and who sent it.
struct NewModule {
  v1::Module module;  // id, format, size, kernels
  std::string bytes;
  std::string uploader;  // the caller's identity: the per-client quota counts its modules
};

// What modules may take of the store: all of them together, and those of one uploader.
struct ModuleQuota {
  int64_t store_bytes = int64_t{4} << 30;
  int64_t client_bytes = int64_t{1} << 30;
};

struct StoredModule {
  v1::Module module;
  std::string bytes;  // empty unless asked for
};

class JobStore {
 public:
  // The schema this build writes; older databases are migrated, newer ones refused.
  static constexpr int kSchemaVersion = 8;

  virtual ~JobStore() = default;

  // "sqlite" or "postgresql", as ServerInfo.store names it.
  virtual std::string Kind() const = 0;
  // True when other daemons may share the store: jobs may run elsewhere, so watchers follow
  // the store rather than this daemon's devices.
  virtual bool Shared() const = 0;

  // The job an idempotency key already created within `scope`, if any.
  virtual absl::StatusOr<std::optional<v1::Job>> FindByIdempotencyKey(const std::string& scope,
                                                                      const std::string& key) = 0;

  struct Inserted {
    v1::Job job;
    bool created = false;  // false: an earlier job had the same idempotency key
  };
  // Stores the job and its first event (from `first_event`, given the stored job) in one
  // transaction: a refused insert leaves nothing stored. Idempotency keys are unique within
  // `key_scope`, across every daemon sharing the store. NOT_FOUND, storing nothing, where a
  // module the job names is not stored (any longer).
  virtual absl::StatusOr<Inserted> Insert(
      const NewJob& job, const std::string& submitter, const std::string& key_scope, absl::Time now,
      const std::function<v1::JobEvent(const v1::Job&)>& first_event) = 0;

  // Jobs stored before schema 6 kept their request only: the ones whose resolved spec is still
  // missing, and the call that stores it (once; a job that has one keeps it).
  virtual absl::StatusOr<std::vector<v1::Job>> Unresolved() = 0;
  virtual absl::Status SetResolved(const std::string& id, const std::string& probe,
                                   const google::protobuf::Any& resolved, bool check) = 0;

  // Stores the module, or, where the same bytes are stored already, renews its used time and
  // returns it with already_stored. A module that would pass the store's quota first ages out
  // the modules no queued or running job names, least recently used first; RESOURCE_EXHAUSTED
  // naming the quota where it still does not fit, or where its uploader's modules would pass
  // theirs. (Daemons of a fleet uploading at once may each pass the check: a quota may be passed
  // by the modules in flight, at most one per daemon.)
  virtual absl::StatusOr<v1::Module> PutModule(const NewModule& module, const ModuleQuota& quota,
                                               absl::Time now) = 0;
  // A stored module's record, and its bytes where `with_bytes`. NOT_FOUND for an id not stored.
  virtual absl::StatusOr<StoredModule> GetModule(const std::string& id, bool with_bytes) = 0;

  // Writes and removes a row of a few pages: whether the store can take more now.
  virtual absl::Status ProbeWrite() = 0;

  virtual absl::StatusOr<v1::Job> Get(const std::string& id) = 0;
  virtual absl::StatusOr<v1::ListJobsResponse> List(const v1::ListJobsRequest& request) = 0;
  virtual absl::StatusOr<int64_t> CountQueued() = 0;

  // For metrics: jobs per state, and rows and checks stored over all jobs.
  struct Totals {
    std::map<v1::JobState, int64_t> jobs_by_state;
    int64_t results = 0;
  };
  virtual absl::StatusOr<Totals> CountTotals() = 0;

  // Queued jobs pinned to device index `device` (of any host).
  virtual absl::StatusOr<int64_t> CountQueuedOn(int device) = 0;

  struct Claimed {
    v1::Job job;  // RUNNING, on the claiming device
    int attempt = 0;
  };
  // Atomically takes the next queued job that `device` of `daemon` may run (pinned to its
  // index or to none, gpu empty or its model, host empty or the daemon's): QUEUED -> RUNNING,
  // attempts + 1, leased to the daemon until `lease_until`. A queued job whose stored request
  // cannot be read is failed (DATA_LOSS, logged once) on the way, and the queue moves on.
  virtual absl::StatusOr<std::optional<Claimed>> ClaimNext(const DaemonRegistration& daemon,
                                                           const DeviceRegistration& device,
                                                           absl::Time now,
                                                           absl::Time lease_until) = 0;

  // Ends the attempt with `finished` (its state and error; appended as the job's event in the
  // same transaction): ABORTED when the attempt is no longer the job's running one (its lease
  // expired and the job was queued again). A store too full for the event still records the
  // end (watchers make the event from the record). `telemetry`: the device over the attempt.
  virtual absl::Status MarkFinished(const std::string& id, int attempt,
                                    const v1::JobEvent& finished, absl::Time now,
                                    const v1::TelemetrySummary* telemetry = nullptr) = 0;
  // QUEUED -> CANCELLED with the event `cancelled`; false when the job was no longer queued (a
  // device took it first).
  virtual absl::StatusOr<bool> CancelQueued(const std::string& id, const v1::JobEvent& cancelled,
                                            absl::Time now) = 0;
  // Asks the daemon running the job to stop it between launches (its next heartbeat hears it).
  virtual absl::Status RequestCancel(const std::string& id) = 0;

  // Appends the job's next event (seq is assigned here, from 0) and counts rows and checks
  // of the attempt as the job's results. An event of an attempt (attempt > 0) is refused with
  // ABORTED once that attempt is no longer the job's running one.
  virtual absl::Status AppendEvent(const std::string& id, const v1::JobEvent& event) = 0;
  // The job's events from seq `from` on, in order.
  virtual absl::StatusOr<std::vector<v1::JobEvent>> Events(const std::string& id,
                                                           int64_t from = 0) = 0;

  // Records the daemon and its devices in the fleet registry. It replaces the entry of the same
  // id, and those of the same host with a device of the same index (that daemon restarted), and
  // removes entries of daemons lost for 10 minutes.
  virtual absl::Status Register(const DaemonRegistration& daemon, absl::Time now) = 0;
  // Removes the daemon from the registry (a clean stop); the jobs it leaves running may be
  // taken over at once (their leases end).
  virtual absl::Status Unregister(const std::string& daemon_id) = 0;
  // Renews the daemon's heartbeat and the leases of the jobs it still runs (`running[i]`:
  // device i's job, "" when idle) until `lease_until`. Returns the ids of those jobs whose
  // cancellation was requested.
  virtual absl::StatusOr<std::vector<std::string>> Heartbeat(
      const std::string& daemon_id, const std::vector<std::string>& running, absl::Time now,
      absl::Time lease_until) = 0;
  // A daemon's periodic beat in one transaction: Heartbeat's renewal, ProbeWrite's test write
  // (apart: a store too full for it still renews) and RequeueExpired's look for expired leases.
  struct Beat {
    std::vector<std::string> cancels;   // as Heartbeat's
    absl::Status writable;              // as ProbeWrite's
    std::vector<ExpiredLease> expired;  // as RequeueExpired's
  };
  virtual absl::StatusOr<Beat> HeartbeatAndSweep(const std::string& daemon_id,
                                                 const std::vector<std::string>& running,
                                                 absl::Time now, absl::Time lease_until,
                                                 int max_attempts) = 0;
  // Every registered device; a daemon whose heartbeat is older than `lost_after` is "lost".
  virtual absl::StatusOr<std::vector<v1::FleetDevice>> FleetDevices(absl::Time now,
                                                                    absl::Duration lost_after) = 0;

  // Waits until another daemon announces a stored event or a queued job (the notifications of
  // a shared store), or `timeout` passed (empty changes). A store no other daemon shares just
  // waits. A queued job is announced to the few daemons that should look for it (see
  // SqlJobStore::AnnounceQueued); `daemon_id` hears only those that name it, or name none.
  virtual absl::StatusOr<StoreChanges> AwaitChanges(absl::Duration timeout,
                                                    const std::string& daemon_id) = 0;

  // Each RUNNING job whose lease expired before `now` is queued again if it has run fewer than
  // `max_attempts` times, else FAILED with the reason: the lease's owner and how late its
  // renewal is. Returns those jobs.
  virtual absl::StatusOr<std::vector<ExpiredLease>> RequeueExpired(int max_attempts,
                                                                   absl::Time now) = 0;
};

}  // namespace gpuprobe
