// The daemon's devices as they run jobs: one thread per device (never a gRPC callback) claims the
// next job that matches it from the store (pinned index, gpu model, host), plans it on the
// device, runs it on the device's executor, publishes its events (stored first) and records its
// end. A job's end that the store does not take is kept here: its device holds the job and runs
// nothing else until the store takes it.
//
//   DeviceRunner runner({.store = store, ...}, std::move(executors));
//   runner.Start();           // the device threads
//   runner.Wake();            // a job was queued: idle devices claim now
//   runner.CancelRunning(id); // stops the job between launches, if a device here runs it
//   runner.Stop();
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/artifacts/artifact_store.h"
#include "server/jobs/device_executor.h"
#include "server/jobs/event_fanout.h"
#include "server/jobs/fleet_membership.h"
#include "server/jobs/store_health.h"
#include "server/probes/registry.h"
#include "server/store/job_store.h"

namespace gpuprobe {

class DeviceRunner {
 public:
  // What the devices use of the daemon; every reference outlives the runner.
  struct Context {
    JobStore& store;
    EventFanout& fanout;
    StoreHealth& store_health;
    const FleetMembership& fleet;
    const ProbeRegistry& probes;
    ArtifactStore* artifacts;     // null: the daemon keeps no artifacts
    absl::Duration min_watchdog;  // a job's watchdog: this plus 10 x its planned device time
  };

  // What a device runs now, as Info and the heartbeat report it.
  struct DeviceRun {
    std::string job_id;                             // "" when idle
    v1::JobProgress progress;                       // the running job's last progress event
    std::optional<v1::TelemetryReading> telemetry;  // the latest reading; unset: none yet
    // How the job ended, while the store has not taken its end (Job.ending); else empty.
    std::string ending;
  };

  // How each device registers in the fleet, by index.
  static std::vector<DeviceRegistration> Registrations(
      const std::vector<std::unique_ptr<DeviceExecutor>>& executors);

  // executors[i] runs device i's jobs; none are claimed before Start.
  DeviceRunner(Context context, std::vector<std::unique_ptr<DeviceExecutor>> executors);
  ~DeviceRunner();  // Stop()
  DeviceRunner(const DeviceRunner&) = delete;
  DeviceRunner& operator=(const DeviceRunner&) = delete;

  void Start();
  // Interrupts the running jobs between launches (they stay RUNNING in the store, to run again
  // at the next start or on another daemon of the fleet) and joins the device threads.
  // Idempotent.
  void Stop();
  bool stopping();
  // A job was queued (here, again after a lost lease, or by another daemon): the idle devices
  // look for it now instead of at their next poll.
  void Wake();
  // Whether a device here runs the job; if so it stops between launches and records CANCELLED.
  bool CancelRunning(const std::string& job_id);

  size_t size() const { return devices_.size(); }
  // What device `index` is and can do (const use only).
  const Backend& info(size_t index) const { return devices_[index]->executor->info(); }
  const DeviceRegistration& registration(size_t index) const {
    return devices_[index]->registration;
  }
  double busy_seconds(size_t index) const { return devices_[index]->busy_seconds.load(); }
  int restarts(size_t index) const { return devices_[index]->executor->restarts(); }
  // Per device, by index: what it runs now.
  std::vector<DeviceRun> Runs();
  // The job each device runs, by index ("" when idle), as the heartbeat renews their leases.
  std::vector<std::string> RunningJobs();
  // How the job ended while its end waits for the store; "" when this daemon keeps no such end.
  std::string Ending(const std::string& job_id);

 private:
  struct Device {
    std::unique_ptr<DeviceExecutor> executor;
    DeviceRegistration registration;
    std::atomic<bool> cancel{false};  // stops the running job between launches
    std::atomic<double> busy_seconds{0.0};
    std::thread thread;
  };

  // Claims and runs jobs until Stop.
  void Loop(int device);
  void RunJob(int device, const JobStore::Claimed& claimed);
  // The job as `device` runs it: its resolved spec planned on the device (the watchdog from the
  // plan's device time) and its artifact directory made; otherwise the error that ends it.
  absl::StatusOr<JobRun> PrepareRun(const v1::Job& job, const Backend& device) const;
  // Stores the event, then hands it to the job's watchers. An event that cannot be stored is
  // not streamed: the store is marked unwritable and the error returned (the caller fails the
  // job with it).
  absl::Status Publish(const std::string& job_id, v1::JobEvent event);
  // Stores the job's end and hands it to its watchers. Until the store takes it, the end is
  // kept here: the watchers hear a JobEnding, Get and List show it (Job.ending), the device
  // holds the job and runs nothing else, and the store is asked again at every heartbeat,
  // until it takes the end, another attempt owns the job (ABORTED) or the daemon stops.
  // Whether the end is stored.
  bool RecordEnd(int device, const std::string& id, const v1::JobEvent& finished, absl::Time end,
                 const v1::TelemetrySummary* telemetry);
  // The device running `job_id`, or -1.
  int DeviceRunning(const std::string& job_id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks the device idle.
  void EndRun(int device) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Context context_;
  std::vector<std::unique_ptr<Device>> devices_;

  // What the devices run and the wake-ups; never held over store I/O.
  absl::Mutex mu_;
  std::vector<DeviceRun> runs_ ABSL_GUARDED_BY(mu_);
  int64_t wakeups_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace gpuprobe
