#include "server/jobs/job_manager.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "google/protobuf/util/time_util.h"
#include "server/jobs/retry_log.h"
#include "server/jobs/telemetry_summary.h"
#include "server/metrics/metrics_registry.h"
#include "server/probes/job_events.h"
#include "server/store/job_record.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

// Stamps the event with the time it is stored.
v1::JobEvent Stamped(v1::JobEvent event) {
  *event.mutable_stored_at() =
      google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(absl::Now()));
  return event;
}

v1::JobEvent CancelledWhileQueued() {
  return Stamped(FinishedEvent(absl::CancelledError("cancelled while queued"), 0, 0.0));
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobManager>> JobManager::Start(
    std::unique_ptr<JobStore> store, std::vector<std::unique_ptr<DeviceExecutor>> executors,
    QueueLimits limits, std::shared_ptr<const ProbeRegistry> probes,
    std::unique_ptr<ArtifactStore> artifacts, FleetOptions fleet) {
  if (executors.empty()) return absl::InvalidArgumentError("devices: none to serve");
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<DeviceRegistration> registrations;
  for (size_t i = 0; i < executors.size(); ++i) {
    auto device = std::make_unique<Device>();
    const Backend& info = executors[i]->info();
    const DeviceDetails details = info.Details();
    device->registration = DeviceRegistration{.index = static_cast<int>(i),
                                              .model = details.name,
                                              .description = info.Description(),
                                              .calibrated_read_tbps = details.calibrated_read_tbps};
    device->executor = std::move(executors[i]);
    registrations.push_back(device->registration);
    devices.push_back(std::move(device));
  }
  auto membership = std::make_unique<FleetMembership>(
      *store, std::move(fleet), std::move(registrations), limits.max_attempts);
  std::unique_ptr<JobManager> manager(new JobManager(std::move(store), limits, std::move(probes),
                                                     std::move(artifacts), std::move(membership),
                                                     std::move(devices)));
  JobManager* m = manager.get();
  manager->ResolveStoredJobs();
  RETURN_IF_ERROR(manager->fleet_->Join(
      {.running = [m] { return m->RunningJobs(); },
       .cancel =
           [m](const std::string& id) {
             absl::MutexLock lock(&m->mu_);
             if (const int device = m->DeviceRunning(id); device >= 0) {
               m->devices_[device]->cancel = true;
             }
           },
       .store_health =
           [m](const absl::Status& answer) { m->store_health_.Set(answer.ok(), answer); },
       .queued_again =
           [m] {
             absl::MutexLock lock(&m->mu_);
             ++m->submissions_;
           }}));
  for (size_t i = 0; i < manager->devices_.size(); ++i) {
    manager->devices_[i]->thread = std::thread([m, i] { m->Loop(static_cast<int>(i)); });
  }
  if (manager->store_->Shared()) manager->watch_thread_ = std::thread([m] { m->WatchLoop(); });
  return manager;
}

JobManager::~JobManager() { Stop(); }

void JobManager::ResolveStoredJobs() {
  absl::StatusOr<std::vector<v1::Job>> jobs = store_->Unresolved();
  if (!jobs.ok()) {
    spdlog::warn("could not read the jobs stored without a resolved spec: {}",
                 jobs.status().ToString());
    return;
  }
  for (const v1::Job& job : *jobs) {
    absl::StatusOr<v1::ProbeRequest> request = ProbeRequestOf(job.request());
    absl::StatusOr<const Probe*> probe =
        request.ok() ? probes_->Get(request->probe()) : request.status();
    absl::StatusOr<google::protobuf::Any> resolved =
        probe.ok() ? (*probe)->Resolve(*request) : probe.status();
    absl::Status stored =
        resolved.ok() ? store_->SetResolved(job.id(), request->probe(), *resolved, request->check())
                      : resolved.status();
    if (!stored.ok()) {
      spdlog::warn(
          "job {}: its resolved spec could not be stored ({}); it shows, but it "
          "neither runs again nor compares",
          job.id(), stored.ToString());
    }
  }
  if (!jobs->empty()) spdlog::info("stored the resolved spec of {} earlier jobs", jobs->size());
}

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
  if (watch_thread_.joinable()) watch_thread_.join();
  fleet_->Leave();
}

std::vector<std::string> JobManager::RunningJobs() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> running;
  for (const DeviceRun& run : runs_) running.push_back(run.job_id);
  return running;
}

void JobManager::WatchLoop() {
  RetryLog log("store notifications");
  while (true) {
    // Notifications (another daemon stored an event or queued a job), or the poll's backstop:
    // a pass over every watcher when nothing was heard.
    absl::StatusOr<StoreChanges> changes = store_->AwaitChanges(fleet_->options().watch_poll);
    log.Record(changes.status());
    if (!changes.ok()) absl::SleepFor(fleet_->options().watch_poll);
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      if (changes.ok() && changes->queued) ++submissions_;  // idle devices look for the job now
    }
    if (!changes.ok() || changes->empty() || changes->every_job) {
      fanout_.FeedStoreWatchers();
    } else if (!changes->job_ids.empty()) {
      fanout_.FeedStoreWatchers(changes->job_ids);
    }
  }
}

absl::StatusOr<v1::Job> JobManager::Submit(v1::SubmitRequest request, const std::string& submitter,
                                           const std::string& key_scope) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::UnavailableError("gpuprobed is shutting down");
  }
  ASSIGN_OR_RETURN(JobStore::Inserted inserted,
                   admission_.Admit(std::move(request), submitter, key_scope));
  if (inserted.created) {
    {
      absl::MutexLock lock(&mu_);
      ++submissions_;
    }
    spdlog::info("job {} queued by {} with {} ahead", inserted.job.id(), submitter,
                 inserted.job.queue_position());
  }
  ExplainWaiting({&inserted.job});
  return inserted.job;
}

absl::StatusOr<const Backend*> JobManager::DeviceFor(const v1::SubmitRequest& request) const {
  if (!ServesTargets(request)) return nullptr;
  if (request.has_device() && request.device() >= devices_.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("device: %d is not a device of this daemon (it serves 0..%d)",
                        request.device(), devices_.size() - 1));
  }
  return &devices_[request.has_device() ? request.device() : 0]->executor->info();
}

bool JobManager::ServesTargets(const v1::SubmitRequest& request) const {
  if (!request.host().empty() && request.host() != fleet_->options().host) return false;
  if (request.gpu().empty()) return true;
  return std::any_of(devices_.begin(), devices_.end(),
                     [&](const auto& d) { return d->registration.model == request.gpu(); });
}

absl::Status JobManager::Watch(const std::string& job_id, std::shared_ptr<JobEventSink> sink,
                               bool all_attempts) {
  RETURN_IF_ERROR(CheckJobId(job_id));
  return fanout_.Watch(job_id, std::move(sink), all_attempts);
}

absl::StatusOr<v1::Job> JobManager::Cancel(const std::string& job_id) {
  RETURN_IF_ERROR(CheckJobId(job_id));
  ASSIGN_OR_RETURN(v1::Job job, store_->Get(job_id));
  if (IsTerminal(job.state())) {
    return absl::FailedPreconditionError(
        absl::StrFormat("job_id: job %s already ended %s", job_id, v1::JobState_Name(job.state())));
  }
  {
    absl::MutexLock lock(&mu_);
    if (const int device = DeviceRunning(job_id); device >= 0) {
      // The device stops between launches and records CANCELLED.
      devices_[device]->cancel = true;
      return job;
    }
  }
  const v1::JobEvent cancelled = CancelledWhileQueued();
  bool was_queued = false;
  RETURN_IF_ERROR(fanout_.Publish(job_id, cancelled, [&]() -> absl::StatusOr<bool> {
    ASSIGN_OR_RETURN(was_queued, store_->CancelQueued(job_id, cancelled, absl::Now()));
    return was_queued;
  }));
  if (was_queued) {
    DaemonMetrics().Add(kJobsFinished, {{"probe", job.probe()}, {"state", "cancelled"}});
  } else {
    // Running on another daemon of the fleet (or taken by a device just now): the heartbeat of
    // the daemon running it hears the request and stops the job between launches.
    RETURN_IF_ERROR(store_->RequestCancel(job_id));
  }
  return store_->Get(job_id);
}

absl::Status JobManager::Publish(const std::string& job_id, v1::JobEvent event) {
  event = Stamped(std::move(event));
  const absl::Status stored = fanout_.Publish(job_id, event, [&]() -> absl::StatusOr<bool> {
    RETURN_IF_ERROR(store_->AppendEvent(job_id, event));
    return true;
  });
  // A lost lease is the fleet's news, not the store's failure.
  if (!stored.ok() && !absl::IsAborted(stored)) store_health_.Set(false, stored);
  return stored;
}

void JobManager::Loop(int device) {
  RetryLog log(absl::StrCat("device ", device, " queue"));
  while (true) {
    int64_t seen = 0;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      seen = submissions_;
    }
    const absl::Time now = absl::Now();
    absl::StatusOr<std::optional<JobStore::Claimed>> next = store_->ClaimNext(
        fleet_->registration(), devices_[device]->registration, now, now + fleet_->options().lease);
    log.Record(next.status());
    if (next.ok() && next->has_value()) {
      RunJob(device, **next);
      continue;
    }
    // Nothing queued: sleep until a job is queued (a submission here, a job queued again, or
    // another daemon's announcement), or the backstop poll.
    absl::MutexLock lock(&mu_);
    auto woken = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || submissions_ != seen;
    };
    mu_.AwaitWithTimeout(absl::Condition(&woken), fleet_->options().claim_poll);
  }
}

void JobManager::RunJob(int device, const JobStore::Claimed& claimed) {
  const v1::Job& job = claimed.job;
  const std::string& id = job.id();
  const int attempt = claimed.attempt;
  Device& d = *devices_[device];
  // A worker that dies under the job is replaced, and its Backend with it: copy what is needed
  // after the run now.
  const Backend& info = d.executor->info();
  const std::string description = info.Description();
  const std::string backend_name = info.Name();
  const absl::Time start = absl::Now();
  const std::string probe = job.probe();
  DaemonMetrics().Observe(
      kJobQueueWait, {{"probe", probe}},
      absl::ToDoubleSeconds(start - absl::FromUnixSeconds(job.created_at().seconds()) -
                            absl::Nanoseconds(job.created_at().nanos())));
  {
    absl::MutexLock lock(&mu_);
    runs_[device].job_id = id;
    runs_[device].progress.Clear();
    d.cancel = stopping_;
  }
  const absl::StatusOr<JobRun> run = PrepareRun(job, info);
  // Why the daemon ended the job itself (its plan, artifacts, the store).
  absl::Status failure = run.status();
  std::vector<v1::TelemetryReading> readings;
  auto publish = [this, &id, device, &d, &failure, &readings, a = attempt](v1::JobEvent event) {
    event.set_attempt(a);
    if (event.has_result()) {
      event.mutable_result()->set_attempt(a);
      event.mutable_result()->set_job_id(id);
    }
    if (event.has_check()) event.mutable_check()->set_job_id(id);
    if (event.has_progress()) {
      absl::MutexLock lock(&mu_);
      runs_[device].progress = event.progress();
    }
    if (event.has_telemetry()) {
      readings.push_back(event.telemetry());
      absl::MutexLock lock(&mu_);
      runs_[device].telemetry = event.telemetry();
    }
    if (!failure.ok()) return;  // the job is ending; nothing more is stored
    if (absl::Status s = Publish(id, std::move(event)); absl::IsAborted(s)) {
      // The lease expired and the job was queued again: another attempt owns it now.
      failure = s;
      d.cancel = true;
    } else if (!s.ok()) {
      // Never streamed as if stored: the job fails with the reason, between launches.
      failure = absl::DataLossError(
          absl::StrCat("gpuprobed could not store the job's results: ", s.message()));
      d.cancel = true;
    }
  };
  spdlog::info("job {} started (attempt {}) on device {}: {}", id, attempt, device, description);
  JobOutcome outcome;
  if (failure.ok()) outcome = d.executor->Run(*run, publish, d.cancel);
  if (!failure.ok()) outcome = JobOutcome{.status = failure};
  const absl::Time end = absl::Now();
  d.busy_seconds = d.busy_seconds.load() + absl::ToDoubleSeconds(end - start);
  DaemonMetrics().Observe(kJobDuration, {{"probe", probe}}, absl::ToDoubleSeconds(end - start));
  {
    absl::MutexLock lock(&mu_);
    // The device is idle from here (its worker is done with the job; what is left is recording
    // its end), so that nothing (Info, /metrics) reports it running a job stored as ended.
    EndRun(device);
    if (stopping_ && outcome.status.code() == absl::StatusCode::kCancelled) {
      // Interrupted by shutdown, not by a user: left RUNNING (its lease given up at Stop), so
      // the next start, or another daemon of the fleet, queues it again.
      spdlog::warn("job {} interrupted by shutdown; it runs again at the next start", id);
      return;
    }
  }
  v1::JobEvent finished =
      Stamped(FinishedEvent(outcome.status, outcome.results, absl::ToDoubleSeconds(end - start)));
  finished.set_attempt(attempt);
  std::optional<v1::TelemetrySummary> telemetry;
  if (!job.check()) telemetry = SummarizeTelemetry(readings, backend_name);
  if (RecordEnd(device, id, finished, end, telemetry ? &*telemetry : nullptr)) {
    DaemonMetrics().Add(
        kJobsFinished, {{"probe", probe},
                        {"state", absl::AsciiStrToLower(
                                      v1::JobState_Name(finished.finished().state()).substr(10))}});
  }
  if (outcome.status.ok()) {
    spdlog::info("job {} succeeded: {} results in {:.2f} s", id, outcome.results,
                 absl::ToDoubleSeconds(end - start));
  } else {
    spdlog::warn("job {} ended: {}", id, outcome.status.ToString());
  }
}

absl::StatusOr<JobRun> JobManager::PrepareRun(const v1::Job& job, const Backend& device) const {
  const auto& labels = LabelsOf(job.request());
  const auto fault = labels.find("gpuprobe.fault");
  JobRun run{.probe = job.probe(),
             .run = {.job_id = job.id(), .resolved = job.resolved(), .check = job.check()},
             .fault = fault == labels.end() ? "" : fault->second};
  if (!job.has_resolved()) {
    return absl::DataLossError(
        "resolved: the job has no resolved spec (stored before there was one, and it could not "
        "be resolved)");
  }
  ASSIGN_OR_RETURN(const Probe* probe, probes_->Get(job.probe()));
  ASSIGN_OR_RETURN(const ProbePlan plan, probe->Plan(job.resolved(), job.check(), device));
  run.watchdog = limits_.min_watchdog + absl::Seconds(10 * plan.device_seconds);
  if (plan.artifact_bytes > 0) {
    if (artifacts_ == nullptr) {
      return absl::FailedPreconditionError("dump: this gpuprobed keeps no artifacts");
    }
    ASSIGN_OR_RETURN(run.run.artifact_dir, artifacts_->PrepareJob(job.id(), plan.artifact_bytes));
  }
  return run;
}

bool JobManager::RecordEnd(int device, const std::string& id, const v1::JobEvent& finished,
                           absl::Time end, const v1::TelemetrySummary* telemetry) {
  auto store = [&] {
    return fanout_.Publish(id, finished, [&]() -> absl::StatusOr<bool> {
      RETURN_IF_ERROR(store_->MarkFinished(id, finished.attempt(), finished, end, telemetry));
      return true;
    });
  };
  absl::Status recorded = store();
  if (!recorded.ok() && !absl::IsAborted(recorded)) {
    // Kept here, not lost: the device holds the job (so the heartbeat renews its lease and no
    // daemon runs it again) and takes no other job until the store takes its end.
    store_health_.Set(false, recorded);
    v1::JobEvent ending;
    *ending.mutable_ending()->mutable_finished() = finished.finished();
    ending.mutable_ending()->set_reason(absl::StrCat(
        "gpuprobed could not store the job's end (", recorded.message(),
        "); it keeps it and stores it as soon as the store takes writes, and its device runs "
        "nothing else meanwhile; the job runs again only if gpuprobed stops first"));
    ending.set_attempt(finished.attempt());
    spdlog::error("job {}: {}", id, ending.ending().reason());
    {
      absl::MutexLock lock(&mu_);
      runs_[device].job_id = id;
      runs_[device].ending = absl::StrCat(
          absl::AsciiStrToLower(v1::JobState_Name(finished.finished().state()).substr(10)),
          ", not stored yet: ", ending.ending().reason());
    }
    fanout_.Tell(id, ending);
    while (!recorded.ok() && !absl::IsAborted(recorded)) {
      {
        absl::MutexLock lock(&mu_);
        auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
        if (mu_.AwaitWithTimeout(absl::Condition(&stopping), fleet_->options().heartbeat)) break;
      }
      recorded = store();
    }
    absl::MutexLock lock(&mu_);
    EndRun(device);
    if (recorded.ok()) {
      spdlog::info("job {}: its end is stored now", id);
    } else if (!absl::IsAborted(recorded)) {
      spdlog::warn(
          "job {}: gpuprobed stops with the job's end unstored; it runs again at the "
          "next start",
          id);
    }
  }
  if (absl::IsAborted(recorded)) {
    spdlog::warn("job {}: {}; this daemon's attempt ends unrecorded", id,
                 std::string(recorded.message()));
  }
  return recorded.ok();
}

int JobManager::DeviceRunning(const std::string& job_id) const {
  if (job_id.empty()) return -1;
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (runs_[i].job_id == job_id) return static_cast<int>(i);
  }
  return -1;
}

void JobManager::EndRun(int device) {
  runs_[device].job_id.clear();
  runs_[device].progress.Clear();
  runs_[device].ending.clear();
}

}  // namespace gpuprobe
