#include "server/jobs/job_manager.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "google/protobuf/util/time_util.h"
#include "server/jobs/proto_mapping.h"
#include "server/probe/sweep_runner.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

bool IsTerminal(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED;
}

// The finished event a job's record implies, for a job that ended without one stored (a
// crash between recording the end and storing the event, or a job failed at restart).
v1::JobEvent FinishedFromRecord(const v1::Job& job) {
  v1::JobEvent event;
  v1::JobFinished* f = event.mutable_finished();
  f->set_state(job.state());
  f->set_error_code(job.error_code());
  f->set_error_message(job.error_message());
  f->set_rows(job.results());
  *f->mutable_finished_at() = job.finished_at();
  event.set_attempt(job.attempts());
  return event;
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobManager>> JobManager::Start(
    std::unique_ptr<JobStore> store, std::vector<std::unique_ptr<DeviceExecutor>> executors,
    QueueLimits limits) {
  if (executors.empty()) return absl::InvalidArgumentError("devices: none to serve");
  ASSIGN_OR_RETURN(std::vector<std::string> requeued,
                   store->RecoverInterrupted(limits.max_attempts, absl::Now()));
  for (const std::string& id : requeued) spdlog::warn("job {} was interrupted; queued again", id);
  std::unique_ptr<JobManager> manager(new JobManager(std::move(store), limits));
  {
    absl::MutexLock lock(&manager->mu_);
    manager->running_ids_.assign(executors.size(), "");
    manager->running_progress_.assign(executors.size(), v1::JobProgress());
  }
  for (auto& executor : executors) {
    manager->devices_.push_back(std::make_unique<Device>());
    manager->devices_.back()->executor = std::move(executor);
  }
  for (size_t i = 0; i < manager->devices_.size(); ++i) {
    manager->devices_[i]->thread =
        std::thread([m = manager.get(), i] { m->Loop(static_cast<int>(i)); });
  }
  return manager;
}

JobManager::~JobManager() { Stop(); }

void JobManager::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  for (auto& device : devices_) device->cancel = true;
  for (auto& device : devices_) {
    if (device->thread.joinable()) device->thread.join();
  }
}

int64_t JobManager::QueueDepth() {
  absl::MutexLock lock(&mu_);
  const int64_t running = std::count_if(running_ids_.begin(), running_ids_.end(),
                                        [](const std::string& id) { return !id.empty(); });
  return store_->CountQueued() + running;
}

v1::ServerInfo JobManager::Info(const std::string& version) {
  v1::ServerInfo info;
  const Backend& device0 = backend();
  info.set_version(version);
  info.set_backend(device0.Name());
  info.set_device(device0.Description());
  info.set_device_memory_bytes(device0.MemoryCapacityBytes());
  info.set_queue_depth(static_cast<uint32_t>(QueueDepth()));
  *info.mutable_details() = DeviceDetailsToProto(device0.Details());
  for (v1::DeviceStatus& device : Devices()) *info.add_devices() = std::move(device);
  return info;
}

absl::StatusOr<std::vector<v1::JobEvent>> JobManager::Results(const std::string& job_id) {
  ASSIGN_OR_RETURN(v1::Job job, store_->Get(job_id));
  ASSIGN_OR_RETURN(std::vector<v1::JobEvent> events, store_->Events(job_id));
  std::vector<v1::JobEvent> results;
  for (v1::JobEvent& e : events) {
    if ((e.has_row() || e.has_check()) && e.attempt() == job.attempts()) {
      results.push_back(std::move(e));
    }
  }
  return results;
}

std::vector<v1::DeviceStatus> JobManager::Devices() {
  absl::MutexLock lock(&mu_);
  std::vector<v1::DeviceStatus> out;
  for (size_t i = 0; i < devices_.size(); ++i) {
    const Backend& info = devices_[i]->executor->info();
    v1::DeviceStatus& d = out.emplace_back();
    d.set_index(static_cast<uint32_t>(i));
    d.set_description(info.Description());
    *d.mutable_details() = DeviceDetailsToProto(info.Details());
    d.set_running_job_id(running_ids_[i]);
    d.set_pinned_queue_depth(static_cast<uint32_t>(store_->CountQueuedOn(static_cast<int>(i))));
    d.set_busy_seconds(devices_[i]->busy_seconds.load());
    d.set_running_reps_done(running_progress_[i].reps_done());
    d.set_running_reps_total(running_progress_[i].reps_total());
    d.set_worker_restarts(static_cast<uint32_t>(devices_[i]->executor->restarts()));
  }
  return out;
}

absl::StatusOr<v1::Job> JobManager::Submit(v1::SubmitRequest request,
                                           const std::string& submitter) {
  if (request.has_check() && !request.check().has_seed()) {
    request.mutable_check()->set_seed(FreshSeed());  // stored, so every attempt checks the same
  }
  if (request.has_device() && request.device() >= devices_.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("device: %d is not a device of this daemon (it serves 0..%d)",
                        request.device(), devices_.size() - 1));
  }
  const Backend& device = devices_[request.has_device() ? request.device() : 0]->executor->info();
  ASSIGN_OR_RETURN(JobSpec job_spec, ResolveJob(request, limits_.sweep));
  RETURN_IF_ERROR(CheckFitsBackend(job_spec.spec, device));
  const double seconds = EstimateDeviceSeconds(job_spec.spec, device);
  if (seconds > limits_.max_job_seconds) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "reps: the job needs about %.0f s of device time, more than the limit of %.0f s "
        "(--max-job-seconds)",
        seconds, limits_.max_job_seconds));
  }
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("gpuprobed is shutting down");
  const int64_t queued = store_->CountQueued();
  if (queued >= limits_.max_queued_jobs) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "queue: %d jobs are queued, the limit (--max-queued-jobs); try again later", queued));
  }
  ASSIGN_OR_RETURN(JobStore::Inserted inserted, store_->Insert(request, submitter, absl::Now()));
  if (inserted.created) {
    ++submissions_;
    v1::JobEvent accepted = AcceptedEvent(inserted.job.id(), inserted.job.queue_position());
    *accepted.mutable_stored_at() = inserted.job.created_at();
    if (absl::Status s = store_->AppendEvent(inserted.job.id(), accepted); !s.ok()) return s;
    spdlog::info("job {} queued by {} with {} ahead", inserted.job.id(), submitter,
                 inserted.job.queue_position());
  }
  return inserted.job;
}

absl::Status JobManager::Watch(const std::string& job_id, std::shared_ptr<JobEventSink> sink) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(v1::Job job, store_->Get(job_id));
  ASSIGN_OR_RETURN(std::vector<v1::JobEvent> events, store_->Events(job_id));
  bool finished = false;
  for (const v1::JobEvent& e : events) {
    if (!sink->Publish(e)) return absl::OkStatus();
    finished = finished || e.has_finished();
  }
  if (IsTerminal(job.state())) {
    if (!finished) sink->Publish(FinishedFromRecord(job));
    return absl::OkStatus();
  }
  watchers_[job_id].push_back(std::move(sink));
  return absl::OkStatus();
}

absl::StatusOr<v1::Job> JobManager::Get(const std::string& job_id) { return store_->Get(job_id); }

absl::StatusOr<v1::ListJobsResponse> JobManager::List(const v1::ListJobsRequest& request) {
  return store_->List(request);
}

absl::StatusOr<v1::Job> JobManager::Cancel(const std::string& job_id) {
  {
    absl::MutexLock lock(&mu_);
    ASSIGN_OR_RETURN(v1::Job job, store_->Get(job_id));
    if (IsTerminal(job.state())) {
      return absl::FailedPreconditionError(absl::StrFormat("job_id: job %s already ended %s",
                                                           job_id, v1::JobState_Name(job.state())));
    }
    auto running = std::find(running_ids_.begin(), running_ids_.end(), job_id);
    if (running != running_ids_.end()) {
      // The device stops between launches and records CANCELLED.
      devices_[running - running_ids_.begin()]->cancel = true;
    } else {
      RETURN_IF_ERROR(store_->MarkFinished(job_id, v1::JOB_STATE_CANCELLED,
                                           static_cast<int>(absl::StatusCode::kCancelled),
                                           "cancelled while queued", absl::Now()));
    }
  }
  ASSIGN_OR_RETURN(v1::Job job, store_->Get(job_id));
  if (job.state() == v1::JOB_STATE_CANCELLED) {
    Publish(job_id,
            FinishedEvent(absl::CancelledError("cancelled while queued"), 0, 0.0, std::nullopt));
  }
  return job;
}

void JobManager::Publish(const std::string& job_id, v1::JobEvent event) {
  *event.mutable_stored_at() =
      google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(absl::Now()));
  absl::MutexLock lock(&mu_);
  if (absl::Status s = store_->AppendEvent(job_id, event); !s.ok()) {
    spdlog::error("job {}: cannot store an event: {}", job_id, s.ToString());
  }
  auto it = watchers_.find(job_id);
  if (it == watchers_.end()) return;
  std::erase_if(it->second, [&](const auto& sink) { return !sink->Publish(event); });
  if (event.has_finished() || it->second.empty()) watchers_.erase(it);
}

void JobManager::Loop(int device) {
  while (true) {
    int64_t seen = 0;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      seen = submissions_;
    }
    absl::StatusOr<std::optional<v1::Job>> next = store_->NextQueued(device);
    if (!next.ok()) spdlog::error("queue: {}", next.status().ToString());
    if (next.ok() && next->has_value()) {
      RunJob(device, **next);
      continue;
    }
    // Nothing queued: sleep until a submission (or a second, as a backstop).
    absl::MutexLock lock(&mu_);
    auto woken = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || submissions_ != seen;
    };
    mu_.AwaitWithTimeout(absl::Condition(&woken), absl::Seconds(1));
  }
}

void JobManager::RunJob(int device, const v1::Job& job) {
  const std::string& id = job.id();
  Device& d = *devices_[device];
  const std::string description = d.executor->info().Description();
  const absl::Time start = absl::Now();
  // Fails when another device took the job first, or it was cancelled meanwhile.
  absl::StatusOr<int> attempt = store_->MarkRunning(id, device, description, start);
  if (!attempt.ok()) return;
  {
    absl::MutexLock lock(&mu_);
    running_ids_[device] = id;
    running_progress_[device].Clear();
    d.cancel = stopping_;
  }
  auto publish = [this, &id, device, a = *attempt](v1::JobEvent event) {
    event.set_attempt(a);
    if (event.has_progress()) {
      absl::MutexLock lock(&mu_);
      running_progress_[device] = event.progress();
    }
    Publish(id, std::move(event));
  };
  spdlog::info("job {} started (attempt {}) on device {}: {}", id, *attempt, device, description);
  const JobOutcome outcome = d.executor->Run(id, job.request(), publish, d.cancel);
  const absl::Time end = absl::Now();
  d.busy_seconds = d.busy_seconds.load() + absl::ToDoubleSeconds(end - start);
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && outcome.status.code() == absl::StatusCode::kCancelled) {
      // Interrupted by shutdown, not by a user: left RUNNING, so the next start queues it again.
      spdlog::warn("job {} interrupted by shutdown; it runs again at the next start", id);
      running_ids_[device].clear();
      running_progress_[device].Clear();
      return;
    }
  }
  const v1::JobEvent finished =
      FinishedEvent(outcome.status, outcome.results, absl::ToDoubleSeconds(end - start),
                    outcome.reference_section_us);
  if (absl::Status s = store_->MarkFinished(id, finished.finished().state(),
                                            static_cast<int>(outcome.status.code()),
                                            std::string(outcome.status.message()), end);
      !s.ok()) {
    spdlog::error("job {}: cannot record its end: {}", id, s.ToString());
  }
  publish(finished);
  if (outcome.status.ok()) {
    spdlog::info("job {} succeeded: {} results in {:.2f} s", id, outcome.results,
                 absl::ToDoubleSeconds(end - start));
  } else {
    spdlog::warn("job {} ended: {}", id, outcome.status.ToString());
  }
  absl::MutexLock lock(&mu_);
  running_ids_[device].clear();
  running_progress_[device].Clear();
}

}  // namespace gpuprobe
