// Where a device's jobs run. InProcessExecutor runs them on a backend inside the daemon (tests,
// and the cpu backend's simplest setup); WorkerProcessExecutor (worker_process.h) runs them in
// a child process, so that a crash or a sticky CUDA error costs one job, not the daemon.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "server/device/backend.h"
#include "server/probes/probe.h"

namespace gpuprobe {

// One job as the daemon hands it to a device.
struct JobRun {
  const Probe* probe;  // the probe that runs it, found once where the job is planned
  ProbeRun run;        // the resolved spec; artifact_dir made by the daemon
  // The label gpuprobe.fault's value (a test's fault for the worker: "abort", "hang"); empty:
  // none.
  std::string fault;
  // The longest a worker process may stay silent (no event) before it is declared stuck,
  // killed and the job failed; derived from the job's estimated device time (JobManager).
  absl::Duration watchdog = absl::InfiniteDuration();
};

class DeviceExecutor {
 public:
  virtual ~DeviceExecutor() = default;
  // What the device is and can do, for validation before a job is queued. Const use only.
  virtual const Backend& info() const = 0;
  // Runs the job to its end on the calling thread; `cancelled` may be set from any thread.
  virtual JobOutcome Run(const JobRun& run, const EventPublisher& publish,
                         const std::atomic<bool>& cancelled) = 0;
  // Times the device's worker was replaced (0 without worker processes).
  virtual int restarts() const { return 0; }
};

class InProcessExecutor final : public DeviceExecutor {
 public:
  explicit InProcessExecutor(std::unique_ptr<Backend> backend) : backend_(std::move(backend)) {}
  const Backend& info() const override { return *backend_; }
  // A client's GPU code never runs in the daemon (ProbeInfo.client_code): FAILED_PRECONDITION.
  JobOutcome Run(const JobRun& run, const EventPublisher& publish,
                 const std::atomic<bool>& cancelled) override {
    if (run.probe->Info().client_code()) {
      return JobOutcome{.status = absl::FailedPreconditionError(
                            "probe: client GPU code runs only in a device worker of its own, and "
                            "this device runs its jobs in gpuprobed (--isolation=none)")};
    }
    return run.probe->Run(run.run, *backend_, publish, cancelled);
  }

 private:
  std::unique_ptr<Backend> backend_;
};

}  // namespace gpuprobe
