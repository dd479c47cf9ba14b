// One device's serial job queue: the daemon's replacement for the hand-taken measurement
// lock. Jobs run one at a time, in submission order, on the worker's own thread (never in a
// gRPC callback); each job's events go to its sink as they happen.
//
//   DeviceWorker worker(std::make_unique<CpuBackend>());
//   ASSIGN_OR_RETURN(int ahead, worker.Enqueue(job));
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/device/backend.h"
#include "server/probe/sweep_spec.h"

namespace gpuprobe {

// Receives a job's events in order: accepted, started, progress..., rows..., finished.
// Publish is called from the worker thread (and once from Enqueue's caller) and must not block.
class JobEventSink {
 public:
  virtual ~JobEventSink() = default;
  virtual void Publish(const v1::JobEvent& event) = 0;
};

enum class JobKind {
  kSweep,  // timed arms, streamed as rows
  kCheck,  // exactness: each arm's kernels once against the float64 reference
};

struct Job {
  std::string id;
  JobKind kind = JobKind::kSweep;
  SweepSpec spec;
  std::string dump_dir;  // kCheck: where to write .npy files; empty for none
  std::shared_ptr<JobEventSink> sink;
  // Set by anyone; the engine stops between launches and the job ends CANCELLED.
  std::atomic<bool> cancelled{false};
};

class DeviceWorker {
 public:
  explicit DeviceWorker(std::unique_ptr<Backend> backend);
  ~DeviceWorker();  // Stop()

  // Queues the job and publishes its accepted event; returns the jobs ahead of it.
  // UNAVAILABLE once the worker is stopping.
  absl::StatusOr<int> Enqueue(std::shared_ptr<Job> job);

  // Cancels the running job and every queued one, then joins the worker thread.
  void Stop();

  // Jobs queued or running.
  int QueueDepth() const;

  // Thread-safe: only the const description and limits are read from other threads.
  const Backend& backend() const { return *backend_; }

 private:
  void Loop();
  void RunJob(Job& job);
  absl::Status RunSweepJob(Job& job, absl::Time start, int* rows,
                           std::optional<double>* reference_section_us);
  absl::Status RunCheckJob(Job& job, int* checks);

  std::unique_ptr<Backend> backend_;
  mutable absl::Mutex mu_;
  std::deque<std::shared_ptr<Job>> queue_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<Job> running_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace gpuprobe
