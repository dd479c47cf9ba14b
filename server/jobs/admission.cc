#include "server/jobs/admission.h"

#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/identifiers.h"
#include "common/status_macros.h"
#include "server/probes/job_events.h"
#include "server/probes/moe_union/sweep_spec.h"

namespace gpuprobe {
namespace {

// A client-chosen key longer than this is refused.
constexpr size_t kMaxIdempotencyKeyBytes = 128;
// A gpu target longer than this is refused (a host: kMaxHostNameBytes).
constexpr size_t kMaxTargetBytes = 128;

}  // namespace

absl::Status Admission::CheckModules(const std::vector<std::string>& modules) {
  int64_t total = 0;
  for (const std::string& id : modules) {
    absl::StatusOr<StoredModule> stored = store_.GetModule(id, /*with_bytes=*/false);
    if (absl::IsNotFound(stored.status())) {
      return absl::FailedPreconditionError(
          absl::StrCat("module ", id,
                       " is not stored: upload it first (gpuprobe upload FILE, or the "
                       "UploadModule rpc)"));
    }
    if (!stored.ok()) {
      return absl::UnavailableError(absl::StrCat("gpuprobed's job store cannot read module ", id,
                                                 ": ", stored.status().message()));
    }
    total += static_cast<int64_t>(stored->module.size_bytes());
  }
  if (total > limits_.max_job_module_bytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "modules: the job names %.1f MiB of modules, more than the %.1f MiB one job may",
        static_cast<double>(total) / (1 << 20),
        static_cast<double>(limits_.max_job_module_bytes) / (1 << 20)));
  }
  return absl::OkStatus();
}

absl::StatusOr<JobStore::Inserted> Admission::Admit(v1::SubmitRequest request,
                                                    const std::string& submitter,
                                                    const std::string& key_scope) {
  RETURN_IF_ERROR(
      CheckPrintable("idempotency_key", request.idempotency_key(), kMaxIdempotencyKeyBytes));
  RETURN_IF_ERROR(hooks_.writable());
  // A retried submit gets its job back, whatever the queue's state.
  ASSIGN_OR_RETURN(std::optional<v1::Job> earlier,
                   store_.FindByIdempotencyKey(key_scope, request.idempotency_key()));
  if (earlier.has_value()) return JobStore::Inserted{.job = *std::move(earlier), .created = false};
  if (request.has_check() && !request.check().has_seed()) {
    request.mutable_check()->set_seed(FreshSeed());  // stored, so every attempt checks the same
  }
  RETURN_IF_ERROR(CheckPrintable("gpu", request.gpu(), kMaxTargetBytes));
  RETURN_IF_ERROR(CheckHostName("host", request.host()));
  ASSIGN_OR_RETURN(const v1::ProbeRequest probe_request, ProbeRequestOf(request));
  ASSIGN_OR_RETURN(const Probe* probe, probes_.Get(probe_request.probe()));
  if (probe->Info().client_code() && !limits_.client_kernels) {
    return absl::FailedPreconditionError(
        absl::StrCat("probe: this gpuprobed takes no client GPU code (--client-kernels=false, or "
                     "--isolation=none), so it runs no \"",
                     probe->Name(), "\" jobs"));
  }
  if (probe_request.check() && !probe->Info().has_check()) {
    return absl::InvalidArgumentError(
        absl::StrCat("check: probe \"", probe->Name(), "\" has no exactness check"));
  }
  RETURN_IF_ERROR(CheckLabels(std::map<std::string, std::string>(probe_request.labels().begin(),
                                                                 probe_request.labels().end()),
                              SweepLimits{}));
  ASSIGN_OR_RETURN(const ProbeSpec spec, probe->Resolve(probe_request));
  RETURN_IF_ERROR(CheckModules(probe->Modules(*spec)));
  // A job for another host or model is planned where it runs; this daemon plans what it can.
  ASSIGN_OR_RETURN(const Backend* device, hooks_.device_for(request));
  if (device != nullptr) {
    ASSIGN_OR_RETURN(const ProbePlan plan, probe->Plan(*spec, probe_request.check(), *device));
    if (plan.device_seconds > limits_.max_job_seconds) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "reps: the job needs about %.0f s of device time, more than the limit of %.0f s "
          "(--max-job-seconds)",
          plan.device_seconds, limits_.max_job_seconds));
    }
    if (plan.artifact_bytes > 0) {
      if (artifacts_ == nullptr) {
        return absl::FailedPreconditionError("dump: this gpuprobed keeps no artifacts");
      }
      if (plan.artifact_bytes > artifacts_->max_bytes()) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "dump: the job would keep about %d bytes of artifacts, more than the limit of %d "
            "(--max-artifact-bytes); check a smaller geometry",
            plan.artifact_bytes, artifacts_->max_bytes()));
      }
    }
  }
  NewJob new_job{.request = request,
                 .probe = probe->Name(),
                 .check = probe_request.check(),
                 .modules = probe->Modules(*spec)};
  new_job.resolved.PackFrom(*spec);
  absl::StatusOr<JobStore::Inserted> inserted;
  {
    absl::MutexLock lock(&mu_);
    const absl::StatusOr<int64_t> queued = store_.CountQueued();
    if (!queued.ok()) {
      // The limit cannot be checked: nothing is queued past it.
      return absl::UnavailableError(absl::StrCat("gpuprobed's job store cannot count the queue: ",
                                                 queued.status().message()));
    }
    if (*queued >= limits_.max_queued_jobs) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "queue: %d jobs are queued, the limit (--max-queued-jobs); try again later", *queued));
    }
    inserted = store_.Insert(new_job, submitter, key_scope, absl::Now(), [](const v1::Job& job) {
      v1::JobEvent accepted = AcceptedEvent(job.id(), job.queue_position());
      *accepted.mutable_stored_at() = job.created_at();
      return accepted;
    });
  }
  if (absl::IsNotFound(inserted.status())) {
    // A module aged out since CheckModules: nothing was stored, and the store is fine.
    return absl::FailedPreconditionError(inserted.status().message());
  }
  if (!inserted.ok()) {
    // Nothing was stored; the store is suspect until a probe write succeeds.
    hooks_.write_failed(inserted.status());
    return absl::ResourceExhaustedError(
        absl::StrCat("gpuprobed's job store cannot write: ", inserted.status().message()));
  }
  return inserted;
}

}  // namespace gpuprobe
