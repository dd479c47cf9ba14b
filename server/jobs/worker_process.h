// Runs a device's jobs in a worker child process: the same gpuprobed binary started with
// --worker-fd over a socketpair (worker_main.h). The child owns the backend, so a segfault,
// an abort or a sticky CUDA error there fails the job that was running, with the reason, and
// the executor starts a fresh worker for the next job; the daemon keeps serving.
//
//   ASSIGN_OR_RETURN(auto executor, WorkerProcessExecutor::Start("/proc/self/exe",
//   {"--backend=cuda"}));
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuprobe/v1/worker.pb.h"
#include "server/jobs/device_executor.h"

namespace gpuprobe {

class WorkerProcessExecutor final : public DeviceExecutor {
 public:
  // Starts the worker and waits for its hello (the backend ready, the card calibrated).
  static absl::StatusOr<std::unique_ptr<WorkerProcessExecutor>> Start(
      std::string binary, std::vector<std::string> worker_args);
  ~WorkerProcessExecutor() override;  // closes the socket; the worker exits; reaps it

  const Backend& info() const override { return *info_; }
  // Replaces a worker that died while idle before handing it the job, and one that does not
  // take the job within kTakeTimeout (stopped or hung while idle; the job goes to the new one).
  // A worker silent for longer than run.watchdog, or for kCancelGrace after a cancel, is killed
  // (SIGKILL) and replaced, and the job ends with the reason. A probe's job that runs client
  // code (ProbeInfo.client_code) gets a worker that ran nothing before it, and the worker ends
  // with the job.
  JobOutcome Run(const JobRun& run, const EventPublisher& publish,
                 const std::atomic<bool>& cancelled) override;

  // How long a cancelled job's worker may take to stop (between launches) before it is killed.
  static constexpr absl::Duration kCancelGrace = absl::Seconds(10);
  // How long an idle worker may take to answer a run command before it is replaced.
  static constexpr absl::Duration kTakeTimeout = absl::Seconds(10);

  // Devices of its kind the worker sees (from its hello).
  int visible_devices() const { return visible_devices_; }
  int restarts() const override { return spawns_ - 1; }

 private:
  WorkerProcessExecutor(std::string binary, std::vector<std::string> worker_args)
      : binary_(std::move(binary)), worker_args_(std::move(worker_args)) {}
  absl::Status Spawn();
  // Whether the worker is still there to take a job.
  bool Alive();
  // Sends `command` (a run) and waits for the worker to take it; a worker that does not is
  // replaced and the command sent to the new one, once.
  absl::Status Hand(const v1::WorkerCommand& command);
  // Kills the worker (SIGKILL), reaps it and starts a new one.
  void Replace(const std::string& why);
  // Reaps the dead worker; says how it ended ("killed by signal 6 (Aborted)").
  std::string Reap();

  const std::string binary_;
  const std::vector<std::string> worker_args_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::unique_ptr<Backend> info_;
  int visible_devices_ = 1;
  std::atomic<int> spawns_{0};
  int jobs_since_spawn_ = 0;  // jobs handed to the running worker
};

}  // namespace gpuprobe
