#include "server/jobs/device_runner.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/jobs/ephemeral_events.h"
#include "server/jobs/retry_log.h"
#include "server/jobs/telemetry_summary.h"
#include "server/metrics/metrics_registry.h"
#include "server/probes/job_events.h"
#include "server/store/job_record.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {

std::vector<DeviceRegistration> DeviceRunner::Registrations(
    const std::vector<std::unique_ptr<DeviceExecutor>>& executors) {
  std::vector<DeviceRegistration> registrations;
  for (size_t i = 0; i < executors.size(); ++i) {
    const Backend& info = executors[i]->info();
    const DeviceDetails details = info.Details();
    registrations.push_back({.index = static_cast<int>(i),
                             .model = details.name,
                             .description = info.Description(),
                             .calibrated_read_tbps = details.calibrated_read_tbps});
  }
  return registrations;
}

DeviceRunner::DeviceRunner(Context context, std::vector<std::unique_ptr<DeviceExecutor>> executors)
    : context_(context), runs_(executors.size()) {
  std::vector<DeviceRegistration> registrations = Registrations(executors);
  for (size_t i = 0; i < executors.size(); ++i) {
    auto device = std::make_unique<Device>();
    device->executor = std::move(executors[i]);
    device->registration = std::move(registrations[i]);
    devices_.push_back(std::move(device));
  }
}

DeviceRunner::~DeviceRunner() { Stop(); }

void DeviceRunner::Start() {
  for (size_t i = 0; i < devices_.size(); ++i) {
    devices_[i]->thread = std::thread([this, i] { Loop(static_cast<int>(i)); });
  }
}

void DeviceRunner::Stop() {
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

bool DeviceRunner::stopping() {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

void DeviceRunner::Wake() {
  absl::MutexLock lock(&mu_);
  ++wakeups_;
}

bool DeviceRunner::CancelRunning(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  const int device = DeviceRunning(job_id);
  if (device >= 0) devices_[device]->cancel = true;
  return device >= 0;
}

std::vector<DeviceRunner::DeviceRun> DeviceRunner::Runs() {
  absl::MutexLock lock(&mu_);
  return runs_;
}

std::vector<std::string> DeviceRunner::RunningJobs() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> running;
  for (const DeviceRun& run : runs_) running.push_back(run.job_id);
  return running;
}

std::string DeviceRunner::Ending(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  const int device = DeviceRunning(job_id);
  return device >= 0 ? runs_[device].ending : "";
}

absl::Status DeviceRunner::Publish(const std::string& job_id, v1::JobEvent event) {
  event = Stamped(std::move(event));
  const absl::Status stored = context_.fanout.Publish(job_id, event, [&]() -> absl::StatusOr<bool> {
    RETURN_IF_ERROR(context_.store.AppendEvent(job_id, event));
    return true;
  });
  // A lost lease is the fleet's news, not the store's failure.
  if (!stored.ok() && !absl::IsAborted(stored)) context_.store_health.Set(false, stored);
  return stored;
}

void DeviceRunner::Loop(int device) {
  RetryLog log(absl::StrCat("device ", device, " queue"));
  while (true) {
    int64_t seen = 0;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      seen = wakeups_;
    }
    const absl::Time now = absl::Now();
    absl::StatusOr<std::optional<JobStore::Claimed>> next =
        context_.store.ClaimNext(context_.fleet.registration(), devices_[device]->registration, now,
                                 now + context_.fleet.options().lease);
    log.Record(next.status());
    if (next.ok() && next->has_value()) {
      RunJob(device, **next);
      continue;
    }
    // Nothing queued: sleep until a job is queued (a submission here, a job queued again, or
    // another daemon's announcement), or the backstop poll.
    absl::MutexLock lock(&mu_);
    auto woken = [this, seen]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || wakeups_ != seen; };
    mu_.AwaitWithTimeout(absl::Condition(&woken), context_.fleet.options().claim_poll);
  }
}

void DeviceRunner::RunJob(int device, const JobStore::Claimed& claimed) {
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
  EphemeralEvents ephemeral;
  auto publish = [this, &id, device, &d, &failure, &readings, &ephemeral,
                  a = attempt](v1::JobEvent event) {
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
    if (!ephemeral.Store(event, absl::Now())) {
      context_.fanout.Tell(id, event);  // live watchers only; never stored, so no stored_at
      return;
    }
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

absl::StatusOr<JobRun> DeviceRunner::PrepareRun(const v1::Job& job, const Backend& device) const {
  const auto& labels = LabelsOf(job.request());
  const auto fault = labels.find("gpuprobe.fault");
  if (!job.has_resolved()) {
    return absl::DataLossError(
        "resolved: the job has no resolved spec (stored before there was one, and it could not "
        "be resolved)");
  }
  ASSIGN_OR_RETURN(const Probe* probe, context_.probes.Get(job.probe()));
  ASSIGN_OR_RETURN(ProbeSpec spec, probe->Open(job.resolved(), job.check()));
  JobRun run{.probe = probe,
             .run = {.job_id = job.id(), .spec = std::move(spec), .check = job.check()},
             .fault = fault == labels.end() ? "" : fault->second};
  ASSIGN_OR_RETURN(const ProbePlan plan, probe->Plan(*run.run.spec, job.check(), device));
  run.watchdog = plan.silence_seconds > 0
                     ? absl::Seconds(plan.silence_seconds)
                     : context_.min_watchdog + absl::Seconds(10 * plan.device_seconds);
  for (const std::string& id : probe->Modules(*run.run.spec)) {
    // Kept in the store while the job is queued or running (job_modules).
    ASSIGN_OR_RETURN(StoredModule stored, context_.store.GetModule(id, /*with_bytes=*/true));
    run.run.modules.emplace(id, std::move(stored.bytes));
  }
  if (plan.artifact_bytes > 0) {
    if (context_.artifacts == nullptr) {
      return absl::FailedPreconditionError("dump: this gpuprobed keeps no artifacts");
    }
    ASSIGN_OR_RETURN(run.run.artifact_dir,
                     context_.artifacts->PrepareJob(job.id(), plan.artifact_bytes));
  }
  return run;
}

bool DeviceRunner::RecordEnd(int device, const std::string& id, const v1::JobEvent& finished,
                             absl::Time end, const v1::TelemetrySummary* telemetry) {
  auto store = [&] {
    return context_.fanout.Publish(id, finished, [&]() -> absl::StatusOr<bool> {
      RETURN_IF_ERROR(
          context_.store.MarkFinished(id, finished.attempt(), finished, end, telemetry));
      return true;
    });
  };
  absl::Status recorded = store();
  if (!recorded.ok() && !absl::IsAborted(recorded)) {
    // Kept here, not lost: the device holds the job (so the heartbeat renews its lease and no
    // daemon runs it again) and takes no other job until the store takes its end.
    context_.store_health.Set(false, recorded);
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
    context_.fanout.Tell(id, ending);
    while (!recorded.ok() && !absl::IsAborted(recorded)) {
      {
        absl::MutexLock lock(&mu_);
        auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
        if (mu_.AwaitWithTimeout(absl::Condition(&stopping), context_.fleet.options().heartbeat))
          break;
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

int DeviceRunner::DeviceRunning(const std::string& job_id) const {
  if (job_id.empty()) return -1;
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (runs_[i].job_id == job_id) return static_cast<int>(i);
  }
  return -1;
}

void DeviceRunner::EndRun(int device) {
  runs_[device].job_id.clear();
  runs_[device].progress.Clear();
  runs_[device].ending.clear();
}

}  // namespace gpuprobe
