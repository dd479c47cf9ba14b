// Admission of a submitted request: checked completely (its own fields; its probe's
// resolution; and, where it may run on this daemon, its plan on the device it would run on:
// what the device can do, its memory, the job's device time, its artifacts), then stored with
// its resolved spec and queued within the queue's bound; or refused, naming the field and the
// limit, with nothing stored. A retried request (its idempotency key already used in its scope)
// gets its job back, whatever the queue's state.
//
//   Admission admission(store, probes, limits, artifacts, hooks);
//   ASSIGN_OR_RETURN(JobStore::Inserted inserted, admission.Admit(request, "alice", ""));
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/artifacts/artifact_store.h"
#include "server/device/backend.h"
#include "server/jobs/queue_limits.h"
#include "server/probes/registry.h"
#include "server/store/job_store.h"

namespace gpuprobe {

class Admission {
 public:
  // What admission asks of the daemon.
  struct Hooks {
    // OK when the store takes writes (or it was made sure that it does again); else the
    // refusal to give.
    std::function<absl::Status()> writable;
    // Told that storing a job failed (the store is suspect).
    std::function<void(const absl::Status&)> write_failed;
    // The device of this daemon that would run the request, or null for a request it cannot
    // run (another host or model: planned where it runs); INVALID_ARGUMENT for a device index
    // it does not have.
    std::function<absl::StatusOr<const Backend*>(const v1::SubmitRequest&)> device_for;
  };

  // `artifacts` null: the daemon keeps none, and refuses requests that would.
  Admission(JobStore& store, const ProbeRegistry& probes, QueueLimits limits,
            const ArtifactStore* artifacts, Hooks hooks)
      : store_(store),
        probes_(probes),
        limits_(limits),
        artifacts_(artifacts),
        hooks_(std::move(hooks)) {}

  // The stored job (Inserted::created false: the earlier job of a retried request).
  absl::StatusOr<JobStore::Inserted> Admit(v1::SubmitRequest request, const std::string& submitter,
                                           const std::string& key_scope);

  const QueueLimits& limits() const { return limits_; }

 private:
  // Every module stored, and all of them within max_job_module_bytes; FAILED_PRECONDITION
  // naming one that is not.
  absl::Status CheckModules(const std::vector<std::string>& modules);

  JobStore& store_;
  const ProbeRegistry& probes_;
  const QueueLimits limits_;
  const ArtifactStore* const artifacts_;
  const Hooks hooks_;
  // Counting the queue and inserting are one step among admissions (nothing else waits on it).
  absl::Mutex mu_;
};

}  // namespace gpuprobe
