#include "server/jobs/job_manager.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/jobs/retry_log.h"
#include "server/metrics/metrics_registry.h"
#include "server/probes/job_events.h"
#include "server/store/job_record.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

v1::JobEvent CancelledWhileQueued() {
  return Stamped(FinishedEvent(absl::CancelledError("cancelled while queued"), 0, 0.0));
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobManager>> JobManager::Start(
    std::unique_ptr<JobStore> store, std::vector<std::unique_ptr<DeviceExecutor>> executors,
    QueueLimits limits, std::shared_ptr<const ProbeRegistry> probes,
    std::unique_ptr<ArtifactStore> artifacts, FleetOptions fleet) {
  if (executors.empty()) return absl::InvalidArgumentError("devices: none to serve");
  auto membership = std::make_unique<FleetMembership>(
      *store, std::move(fleet), DeviceRunner::Registrations(executors), limits.max_attempts);
  std::unique_ptr<JobManager> manager(new JobManager(std::move(store), limits, std::move(probes),
                                                     std::move(artifacts), std::move(membership),
                                                     std::move(executors)));
  JobManager* m = manager.get();
  manager->ResolveStoredJobs();
  RETURN_IF_ERROR(manager->fleet_->Join(
      {.running = [m] { return m->runner_.RunningJobs(); },
       .cancel = [m](const std::string& id) { m->runner_.CancelRunning(id); },
       .store_health =
           [m](const absl::Status& answer) { m->store_health_.Set(answer.ok(), answer); },
       // A shared store announces the job to the daemons that should look for it.
       .queued_again =
           [m] {
             if (!m->store_->Shared()) m->runner_.Wake();
           }}));
  manager->runner_.Start();
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
    absl::StatusOr<ProbeSpec> spec = probe.ok() ? (*probe)->Resolve(*request) : probe.status();
    google::protobuf::Any resolved;
    if (spec.ok()) resolved.PackFrom(**spec);
    absl::Status stored =
        spec.ok() ? store_->SetResolved(job.id(), request->probe(), resolved, request->check())
                  : spec.status();
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
  runner_.Stop();
  if (watch_thread_.joinable()) watch_thread_.join();
  fleet_->Leave();
}

namespace {
constexpr absl::Duration kRetryAwayStore = absl::Milliseconds(250);
}  // namespace

void JobManager::WatchLoop() {
  RetryLog log("store notifications");
  while (true) {
    // Notifications (another daemon stored an event or queued a job), or the poll's backstop:
    // a pass over every watcher when nothing was heard.
    absl::StatusOr<StoreChanges> changes =
        store_->AwaitChanges(fleet_->options().watch_poll, fleet_->options().daemon_id);
    log.Record(changes.status());
    // The store away: try again soon, so that its return (and what was queued meanwhile) is
    // heard within a moment, not at the next backstop poll.
    if (!changes.ok()) absl::SleepFor(std::min(fleet_->options().watch_poll, kRetryAwayStore));
    if (runner_.stopping()) return;
    if (changes.ok() && changes->queued) runner_.Wake();  // idle devices look for the job now
    if (!changes.ok() || changes->empty() || changes->every_job) {
      fanout_.FeedStoreWatchers();
    } else if (!changes->job_ids.empty()) {
      fanout_.FeedStoreWatchers(changes->job_ids);
    }
  }
}

absl::StatusOr<v1::Job> JobManager::Submit(v1::SubmitRequest request, const std::string& submitter,
                                           const std::string& key_scope) {
  if (runner_.stopping()) return absl::UnavailableError("gpuprobed is shutting down");
  ASSIGN_OR_RETURN(JobStore::Inserted inserted,
                   admission_.Admit(std::move(request), submitter, key_scope));
  if (inserted.created) {
    // A shared store announces the job to the few daemons that should look for it (this one
    // when it is idle), not to all.
    if (!store_->Shared()) runner_.Wake();
    spdlog::info("job {} queued by {} with {} ahead", inserted.job.id(), submitter,
                 inserted.job.queue_position());
  }
  ExplainWaiting({&inserted.job});
  return inserted.job;
}

absl::StatusOr<const Backend*> JobManager::DeviceFor(const v1::SubmitRequest& request) const {
  if (!request.host().empty() && request.host() != fleet_->options().host) {
    // A job for a host no daemon of the fleet has (a typo, a host gone) would wait for ever.
    ASSIGN_OR_RETURN(const std::vector<v1::FleetDevice> devices, fleet_->Devices());
    std::set<std::string> hosts = {fleet_->options().host};
    for (const v1::FleetDevice& d : devices) hosts.insert(d.host());
    if (!hosts.contains(request.host())) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "host: no daemon of this fleet is on host \"%s\" (the registry, which forgets a daemon "
          "lost for 10 minutes, has %s)",
          request.host(), absl::StrJoin(hosts, ", ")));
    }
  }
  if (!ServesTargets(request)) return nullptr;
  if (request.has_device() && request.device() >= runner_.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("device: %d is not a device of this daemon (it serves 0..%d)",
                        request.device(), runner_.size() - 1));
  }
  return &runner_.info(request.has_device() ? request.device() : 0);
}

bool JobManager::ServesTargets(const v1::SubmitRequest& request) const {
  if (!request.host().empty() && request.host() != fleet_->options().host) return false;
  if (request.gpu().empty()) return true;
  for (size_t i = 0; i < runner_.size(); ++i) {
    if (runner_.registration(i).model == request.gpu()) return true;
  }
  return false;
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
  // A device here running it stops between launches and records CANCELLED.
  if (runner_.CancelRunning(job_id)) return job;
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

}  // namespace gpuprobe
