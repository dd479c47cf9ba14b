// The daemon's devices' queues: the replacement for the hand-taken measurement lock.
//
// Jobs wait in the store (priority, then submission order); each device runs one at a time on
// its own thread (never a gRPC callback), claiming the next job that matches it (pinned index,
// gpu model, host). Admission checks a submitted request completely and stores it within the
// queue's bound; the events of jobs reach their watchers through EventFanout (stored first, no
// gap, no duplicate). No lock of the manager is held over store I/O.
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
#include "server/jobs/event_fanout.h"
#include "server/jobs/fleet_membership.h"
#include "server/jobs/store_health.h"
#include "server/probes/moe_union/sweep_spec.h"
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
  // What device 0 is and can do (const use only); all devices of a daemon share a backend kind.
  const Backend& backend() const { return devices_[0]->executor->info(); }
  // The probes the daemon serves.
  const ProbeRegistry& probes() const { return *probes_; }

 private:
  struct Device {
    std::unique_ptr<DeviceExecutor> executor;
    DeviceRegistration registration;
    std::atomic<bool> cancel{false};  // stops the running job between launches
    std::atomic<double> busy_seconds{0.0};
    std::thread thread;
  };

  // What a device runs now, as Info and the heartbeat report it.
  struct DeviceRun {
    std::string job_id;                             // "" when idle
    v1::JobProgress progress;                       // the running job's last progress event
    std::optional<v1::TelemetryReading> telemetry;  // the latest reading; unset: none yet
    // How the job ended, while the store has not taken its end (Job.ending); else empty.
    std::string ending;
  };

  absl::StatusOr<std::vector<v1::DeviceStatus>> Devices();
  // The device running `job_id`, or -1.
  int DeviceRunning(const std::string& job_id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks the device idle.
  void EndRun(int device) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Stores the job's end and hands it to its watchers. Until the store takes it, the end is
  // kept here: the watchers hear a JobEnding, Get and List show it (Job.ending), the device
  // holds the job and runs nothing else, and the store is asked again at every heartbeat,
  // until it takes the end, another attempt owns the job (ABORTED) or the daemon stops.
  // Whether the end is stored.
  bool RecordEnd(int device, const std::string& id, const v1::JobEvent& finished, absl::Time end,
                 const v1::TelemetrySummary* telemetry);
  // Job.ending of the jobs whose end this daemon keeps.
  void ExplainEnding(const std::vector<v1::Job*>& jobs);

  JobManager(std::unique_ptr<JobStore> store, QueueLimits limits,
             std::shared_ptr<const ProbeRegistry> probes, std::unique_ptr<ArtifactStore> artifacts,
             std::unique_ptr<FleetMembership> fleet, std::vector<std::unique_ptr<Device>> devices)
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
        devices_(std::move(devices)),
        runs_(devices_.size()) {}

  // Stores the resolved spec of every job stored before there was one (schema 6): its probe
  // resolves the stored request once.
  void ResolveStoredJobs();

  void Loop(int device);
  void RunJob(int device, const JobStore::Claimed& claimed);
  // The job as `device` runs it: its resolved spec planned on the device (the watchdog from the
  // plan's device time) and its artifact directory made; otherwise the error that ends it.
  absl::StatusOr<JobRun> PrepareRun(const v1::Job& job, const Backend& device) const;
  // The job each device runs, by index ("" when idle), as the heartbeat renews their leases.
  std::vector<std::string> RunningJobs();
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
  // Stores the event, then hands it to the job's watchers. An event that cannot be stored is
  // not streamed: the store is marked unwritable and the error returned (the caller fails the
  // job with it).
  absl::Status Publish(const std::string& job_id, v1::JobEvent event);

  std::unique_ptr<JobStore> store_;
  const QueueLimits limits_;
  const std::shared_ptr<const ProbeRegistry> probes_;
  const std::unique_ptr<ArtifactStore> artifacts_;
  const std::unique_ptr<FleetMembership> fleet_;
  EventFanout fanout_;
  StoreHealth store_health_;
  Admission admission_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::thread watch_thread_;

  // What the devices run and the wake-ups; never held over store I/O.
  absl::Mutex mu_;
  // Per device, by index: what it runs now.
  std::vector<DeviceRun> runs_ ABSL_GUARDED_BY(mu_);
  int64_t submissions_ ABSL_GUARDED_BY(mu_) = 0;  // wakes the device threads
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace gpuprobe
