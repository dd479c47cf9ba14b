// The daemon's devices' queues: the replacement for the hand-taken measurement lock.
//
// Jobs wait in the store (priority, then submission order); the DeviceRunner runs them, one at a
// time per device, each device claiming the next job that matches it (pinned index, gpu model,
// host). Admission checks a submitted request completely and stores it within the queue's bound;
// the events of jobs reach their watchers through EventFanout (stored first, no gap, no
// duplicate). The read side (a job, lists, results, info) is in job_queries.cc. No lock of the
// manager is held over store I/O.
//
// The daemon is a member of the store's fleet (FleetMembership: registration, heartbeat, leases,
// cancels asked through other daemons, jobs of lost daemons queued again). With a shared store (a
// fleet), jobs may run on other daemons, so watchers follow the store's events (read when the store
// announces a change, at least every FleetOptions::watch_poll) rather than this daemon's devices.
//
//   ASSIGN_OR_RETURN(auto manager,
//                    JobManager::Start(std::move(store), std::move(executors), {}, probes));
//   ASSIGN_OR_RETURN(v1::Job job, manager->Submit(request, "127.0.0.1"));
//   RETURN_IF_ERROR(manager->Watch(job.id(), sink));
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/artifacts/artifact_store.h"
#include "server/device/backend.h"
#include "server/jobs/admission.h"
#include "server/jobs/device_executor.h"
#include "server/jobs/device_runner.h"
#include "server/jobs/event_fanout.h"
#include "server/jobs/fleet_membership.h"
#include "server/jobs/store_health.h"
#include "server/probes/registry.h"
#include "server/store/job_store.h"

namespace gpuprobe {

class JobManager {
 public:
  // Registers the daemon, stores the resolved spec of jobs stored before there was one,
  // re-queues (or fails) the jobs whose daemon is gone, then starts the device threads.
  // executors[i] runs device i's jobs; `probes` resolves and plans every job.
  // `artifacts` null: the daemon keeps no artifacts and refuses checks with dump.
  static absl::StatusOr<std::unique_ptr<JobManager>> Start(
      std::unique_ptr<JobStore> store, std::vector<std::unique_ptr<DeviceExecutor>> executors,
      QueueLimits limits, std::shared_ptr<const ProbeRegistry> probes,
      std::unique_ptr<ArtifactStore> artifacts = nullptr, FleetOptions fleet = {});
  ~JobManager();  // Stop()

  // Validates the request completely (its probe resolves it: fields and limits; and plans it on
  // this daemon's device where it may run here: what the device can do, its memory, the job's
  // device time; then the queue's bounds), then stores it with its resolved spec and queues it.
  // With an idempotency key this scope already used, returns the earlier job (even when the queue
  // is full): keys are unique per `key_scope` (a token's name; "" shares one scope among all).
  // RESOURCE_EXHAUSTED while the store cannot write.
  absl::StatusOr<v1::Job> Submit(v1::SubmitRequest request, const std::string& submitter,
                                 const std::string& key_scope = "");

  // Replays the job's stored events (of its last attempt only, unless `all_attempts`) into
  // `sink`, then follows it until its finished event.
  absl::Status Watch(const std::string& job_id, std::shared_ptr<JobEventSink> sink,
                     bool all_attempts = false);

  // The job's artifacts (a check run with dump); NOT_FOUND for an unknown job.
  absl::StatusOr<std::vector<v1::Artifact>> ListArtifacts(const std::string& job_id);
  // One artifact, open for reading; NOT_FOUND for an unknown job or name.
  absl::StatusOr<std::unique_ptr<ArtifactReader>> OpenArtifact(const std::string& job_id,
                                                               const std::string& name);

  // Whether the store took its last write, and who hears when that changes.
  StoreHealth& store_health() { return store_health_; }

  absl::StatusOr<v1::Job> Get(const std::string& job_id);
  absl::StatusOr<v1::ListJobsResponse> List(const v1::ListJobsRequest& request);
  absl::StatusOr<v1::Job> Cancel(const std::string& job_id);

  // Interrupts the running jobs between launches (they stay RUNNING in the store, their lease
  // given up: they run again at the next start, or on another daemon of the fleet), stops the
  // device threads and leaves the fleet registry. Queued jobs stay queued.
  void Stop();

  // Jobs queued or running, on every device.
  absl::StatusOr<int64_t> QueueDepth();
  // The daemon, its devices and its queue, as GetServerInfo and /api/v1/info report them.
  // UNAVAILABLE when the store cannot count the queue.
  absl::StatusOr<v1::ServerInfo> Info(const std::string& version);
  absl::StatusOr<JobStore::Totals> Totals() { return store_->CountTotals(); }
  // Every device of the fleet sharing the store (this daemon's included).
  absl::StatusOr<std::vector<v1::FleetDevice>> Fleet();
  // The rows (sweeps) or checks of the job's last attempt, in order.
  absl::StatusOr<std::vector<v1::JobEvent>> Results(const std::string& job_id);
  // A module a client uploaded (its bytes whole, `uploader` the caller's name): checked
  // (InspectModule), then stored under its sha256, or found stored. FAILED_PRECONDITION where
  // the daemon takes no client kernels, RESOURCE_EXHAUSTED past --max-module-bytes or a quota.
  absl::StatusOr<v1::Module> StoreModule(const std::string& bytes, const std::string& uploader);
  // A stored module's record; INVALID_ARGUMENT for an id that is no sha256, NOT_FOUND.
  absl::StatusOr<v1::Module> GetModule(const std::string& id);
  // The largest module an upload may send (--max-module-bytes).
  int64_t max_module_bytes() const { return limits_.max_module_bytes; }
  // What device 0 is and can do (const use only); all devices of a daemon share a backend kind.
  const Backend& backend() const { return runner_.info(0); }
  // The probes the daemon serves.
  const ProbeRegistry& probes() const { return *probes_; }

 private:
  absl::StatusOr<std::vector<v1::DeviceStatus>> Devices();
  // Job.ending of the jobs whose end this daemon keeps.
  void ExplainEnding(const std::vector<v1::Job*>& jobs);

  JobManager(std::unique_ptr<JobStore> store, QueueLimits limits,
             std::shared_ptr<const ProbeRegistry> probes, std::unique_ptr<ArtifactStore> artifacts,
             std::unique_ptr<FleetMembership> fleet,
             std::vector<std::unique_ptr<DeviceExecutor>> executors)
      : store_(std::move(store)),
        limits_(limits),
        probes_(std::move(probes)),
        artifacts_(std::move(artifacts)),
        fleet_(std::move(fleet)),
        fanout_(*store_),
        store_health_(*store_),
        admission_(
            *store_, *probes_, limits, artifacts_.get(),
            {.writable = [this] { return store_health_.Ensure(); },
             .write_failed = [this](const absl::Status& why) { store_health_.Set(false, why); },
             .device_for = [this](const v1::SubmitRequest& r) { return DeviceFor(r); }}),
        runner_({.store = *store_,
                 .fanout = fanout_,
                 .store_health = store_health_,
                 .fleet = *fleet_,
                 .probes = *probes_,
                 .artifacts = artifacts_.get(),
                 .min_watchdog = limits.min_watchdog},
                std::move(executors)) {}

  // Stores the resolved spec of every job stored before there was one (schema 6): its probe
  // resolves the stored request once.
  void ResolveStoredJobs();

  // Feeds the store watchers, until Stop.
  void WatchLoop();
  // Sets the waiting reason of each queued job with a gpu or host target that no serving
  // device of the fleet matches (the fleet is read once, and only when such a job is there).
  void ExplainWaiting(const std::vector<v1::Job*>& jobs);
  // The same for one queued, targeted job against `fleet`.
  static void ExplainWaiting(v1::Job& job, const std::vector<v1::FleetDevice>& fleet);
  // Whether a device of this daemon may run the request (its gpu and host targets).
  bool ServesTargets(const v1::SubmitRequest& request) const;
  // The device that would run the request here (Admission::Hooks::device_for).
  absl::StatusOr<const Backend*> DeviceFor(const v1::SubmitRequest& request) const;

  std::unique_ptr<JobStore> store_;
  const QueueLimits limits_;
  const std::shared_ptr<const ProbeRegistry> probes_;
  const std::unique_ptr<ArtifactStore> artifacts_;
  const std::unique_ptr<FleetMembership> fleet_;
  EventFanout fanout_;
  StoreHealth store_health_;
  Admission admission_;
  DeviceRunner runner_;
  std::thread watch_thread_;
};

}  // namespace gpuprobe
