// The queue of one device and the fan-out of its jobs' events: the daemon's replacement for the
// hand-taken measurement lock.
//
// Jobs wait in the store (priority, then submission order) and run one at a time on the
// manager's worker thread, never in a gRPC callback. Every event is appended to the store
// before any watcher sees it; a watcher gets the stored events first, then the live ones, with
// no gap and no duplicate. Watchers come and go without touching the job.
//
//   ASSIGN_OR_RETURN(auto manager, JobManager::Start(std::move(store), std::move(backend), {}));
//   ASSIGN_OR_RETURN(v1::Job job, manager->Submit(request, "127.0.0.1"));
//   RETURN_IF_ERROR(manager->Watch(job.id(), sink));
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/device/backend.h"
#include "server/jobs/device_executor.h"
#include "server/jobs/job_store.h"
#include "server/probe/sweep_spec.h"

namespace gpuprobe {

// Receives one job's events in order. Publish is called with the manager's lock held and must
// not block (queue and return) nor call back into the manager; it returns false once the
// sink takes no more events (its client left), and the manager then forgets it.
class JobEventSink {
 public:
  virtual ~JobEventSink() = default;
  virtual bool Publish(const v1::JobEvent& event) = 0;
};

struct QueueLimits {
  int max_queued_jobs = 1000;
  // A job's estimated device time (its launches' bytes at the device's read bandwidth, plus
  // launch overhead) may not exceed this.
  double max_job_seconds = 3600.0;
  // Runs of a job that a daemon restart interrupted before it is failed instead of re-queued.
  int max_attempts = 2;
  SweepLimits sweep;
};

class JobManager {
 public:
  // Re-queues (or fails) the jobs a previous daemon left running, then starts the worker.
  static absl::StatusOr<std::unique_ptr<JobManager>> Start(
      std::unique_ptr<JobStore> store, std::unique_ptr<DeviceExecutor> executor,
      QueueLimits limits);
  ~JobManager();  // Stop()

  // Validates the request completely (fields, limits, the backend's variants, geometry and
  // memory, the queue's bounds), then stores and queues it. With an idempotency key already
  // used, returns the earlier job.
  absl::StatusOr<v1::Job> Submit(v1::SubmitRequest request, const std::string& submitter);

  // Replays the job's stored events into `sink`, then follows it until its finished event.
  absl::Status Watch(const std::string& job_id, std::shared_ptr<JobEventSink> sink);

  absl::StatusOr<v1::Job> Get(const std::string& job_id);
  absl::StatusOr<v1::ListJobsResponse> List(const v1::ListJobsRequest& request);
  absl::StatusOr<v1::Job> Cancel(const std::string& job_id);

  // Stops the running job between launches (it ends CANCELLED) and the worker. Queued jobs
  // stay queued in the store for the next start.
  void Stop();

  int64_t QueueDepth();
  // What the device is and can do (const use only).
  const Backend& backend() const { return executor_->info(); }

 private:
  JobManager(std::unique_ptr<JobStore> store, std::unique_ptr<DeviceExecutor> executor,
             QueueLimits limits)
      : store_(std::move(store)), executor_(std::move(executor)), limits_(limits) {}

  void Loop();
  void RunJob(const v1::Job& job);
  // Stores the event, then hands it to the job's watchers.
  void Publish(const std::string& job_id, v1::JobEvent event);

  std::unique_ptr<JobStore> store_;
  std::unique_ptr<DeviceExecutor> executor_;
  const QueueLimits limits_;

  absl::Mutex mu_;
  std::map<std::string, std::vector<std::shared_ptr<JobEventSink>>> watchers_ ABSL_GUARDED_BY(mu_);
  std::string running_id_ ABSL_GUARDED_BY(mu_);
  int64_t submissions_ ABSL_GUARDED_BY(mu_) = 0;  // wakes the worker
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> cancel_running_{false};
  std::thread thread_;
};

}  // namespace gpuprobe
