// JobManager's read side: a job, the job list, a job's results and artifacts, the daemon's
// devices and info, the fleet, and why a job waits or has not ended (job_manager.h declares them).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "server/jobs/job_manager.h"
#include "server/probes/job_events.h"
#include "server/store/job_record.h"

namespace gpuprobe {

absl::StatusOr<std::vector<v1::FleetDevice>> JobManager::Fleet() { return fleet_->Devices(); }

absl::StatusOr<int64_t> JobManager::QueueDepth() {
  const std::vector<std::string> jobs = runner_.RunningJobs();
  const int64_t running =
      std::count_if(jobs.begin(), jobs.end(), [](const std::string& id) { return !id.empty(); });
  ASSIGN_OR_RETURN(const int64_t queued, store_->CountQueued());
  return queued + running;
}

absl::StatusOr<v1::ServerInfo> JobManager::Info(const std::string& version) {
  v1::ServerInfo info;
  const Backend& device0 = backend();
  info.set_version(version);
  info.set_backend(device0.Name());
  info.set_device(device0.Description());
  info.set_device_memory_bytes(device0.MemoryCapacityBytes());
  ASSIGN_OR_RETURN(const int64_t depth, QueueDepth());
  info.set_queue_depth(static_cast<uint32_t>(depth));
  info.set_host(fleet_->options().host);
  info.set_store(store_->Kind());
  if (absl::StatusOr<std::vector<v1::FleetDevice>> fleet = Fleet(); fleet.ok()) {
    for (v1::FleetDevice& d : *fleet) *info.add_fleet() = std::move(d);
  }
  *info.mutable_details() = DeviceDetailsToProto(device0.Details());
  ASSIGN_OR_RETURN(std::vector<v1::DeviceStatus> devices, Devices());
  for (v1::DeviceStatus& device : devices) *info.add_devices() = std::move(device);
  return info;
}

absl::StatusOr<std::vector<v1::JobEvent>> JobManager::Results(const std::string& job_id) {
  ASSIGN_OR_RETURN(v1::Job job, store_->Get(job_id));
  ASSIGN_OR_RETURN(std::vector<v1::JobEvent> events, store_->Events(job_id));
  std::vector<v1::JobEvent> results;
  for (v1::JobEvent& e : events) {
    if (IsResultEvent(e) && e.attempt() == job.attempts()) {
      results.push_back(std::move(e));
    }
  }
  return results;
}

absl::StatusOr<std::vector<v1::DeviceStatus>> JobManager::Devices() {
  const std::vector<DeviceRunner::DeviceRun> runs = runner_.Runs();
  std::vector<v1::DeviceStatus> out;
  for (size_t i = 0; i < runner_.size(); ++i) {
    const Backend& info = runner_.info(i);
    v1::DeviceStatus& d = out.emplace_back();
    d.set_index(static_cast<uint32_t>(i));
    d.set_description(info.Description());
    *d.mutable_details() = DeviceDetailsToProto(info.Details());
    d.set_running_job_id(runs[i].job_id);
    ASSIGN_OR_RETURN(const int64_t pinned, store_->CountQueuedOn(static_cast<int>(i)));
    d.set_pinned_queue_depth(static_cast<uint32_t>(pinned));
    d.set_busy_seconds(runner_.busy_seconds(i));
    d.set_running_reps_done(runs[i].progress.reps_done());
    d.set_running_reps_total(runs[i].progress.reps_total());
    d.set_worker_restarts(static_cast<uint32_t>(runner_.restarts(i)));
    if (runs[i].telemetry) *d.mutable_telemetry() = *runs[i].telemetry;
  }
  return out;
}

void JobManager::ExplainWaiting(const std::vector<v1::Job*>& jobs) {
  auto targeted = [](const v1::Job* j) {
    return j->state() == v1::JOB_STATE_QUEUED &&
           !(j->request().gpu().empty() && j->request().host().empty());
  };
  if (std::none_of(jobs.begin(), jobs.end(), targeted)) return;
  absl::StatusOr<std::vector<v1::FleetDevice>> fleet = Fleet();
  if (!fleet.ok()) return;  // the reason is a courtesy; the job's state is what counts
  for (v1::Job* job : jobs) {
    if (targeted(job)) ExplainWaiting(*job, *fleet);
  }
}

void JobManager::ExplainWaiting(v1::Job& job, const std::vector<v1::FleetDevice>& fleet) {
  const v1::SubmitRequest& r = job.request();
  const bool served = std::any_of(fleet.begin(), fleet.end(), [&](const v1::FleetDevice& d) {
    return d.state() == "serving" && (r.gpu().empty() || d.model() == r.gpu()) &&
           (r.host().empty() || d.host() == r.host()) &&
           (!r.has_device() || d.index() == r.device());
  });
  if (served) return;
  std::string want = r.gpu().empty() ? "a device" : absl::StrCat("a \"", r.gpu(), "\"");
  if (!r.host().empty()) absl::StrAppend(&want, " on host \"", r.host(), "\"");
  if (r.has_device()) absl::StrAppend(&want, " with index ", r.device());
  std::vector<std::string> serving;
  for (const v1::FleetDevice& d : fleet) {
    if (d.state() == "serving") serving.push_back(absl::StrCat(d.host(), ": ", d.model()));
  }
  std::sort(serving.begin(), serving.end());
  serving.erase(std::unique(serving.begin(), serving.end()), serving.end());
  job.set_waiting_reason(absl::StrCat(
      "no serving gpuprobed of the fleet has ", want, "; it stays queued until one joins (",
      serving.empty() ? "none serves now" : absl::StrCat("serving: ", absl::StrJoin(serving, ", ")),
      ")"));
}

void JobManager::ExplainEnding(const std::vector<v1::Job*>& jobs) {
  for (v1::Job* job : jobs) {
    if (job->state() == v1::JOB_STATE_RUNNING) job->set_ending(runner_.Ending(job->id()));
  }
}

absl::StatusOr<v1::Job> JobManager::Get(const std::string& job_id) {
  RETURN_IF_ERROR(CheckJobId(job_id));
  ASSIGN_OR_RETURN(v1::Job job, store_->Get(job_id));
  ExplainWaiting({&job});
  ExplainEnding({&job});
  return job;
}

absl::StatusOr<std::vector<v1::Artifact>> JobManager::ListArtifacts(const std::string& job_id) {
  RETURN_IF_ERROR(Get(job_id).status());
  if (artifacts_ == nullptr) return std::vector<v1::Artifact>();
  return artifacts_->List(job_id);
}

absl::StatusOr<std::unique_ptr<ArtifactReader>> JobManager::OpenArtifact(const std::string& job_id,
                                                                         const std::string& name) {
  RETURN_IF_ERROR(Get(job_id).status());
  if (artifacts_ == nullptr) return absl::NotFoundError("name: no such artifact of the job");
  return artifacts_->Open(job_id, name);
}

absl::StatusOr<v1::ListJobsResponse> JobManager::List(const v1::ListJobsRequest& request) {
  ASSIGN_OR_RETURN(v1::ListJobsResponse response, store_->List(request));
  std::vector<v1::Job*> jobs;
  for (v1::Job& job : *response.mutable_jobs()) jobs.push_back(&job);
  ExplainWaiting(jobs);
  ExplainEnding(jobs);
  return response;
}

}  // namespace gpuprobe
