#include "server/jobs/job_execution.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "server/jobs/proto_mapping.h"
#include "server/jobs/telemetry_summary.h"
#include "server/probe/exactness.h"
#include "server/probe/sweep_runner.h"

namespace gpuprobe {
namespace {

// Forwards the engine's progress, rows and checks as job events.
class PublishingObserver final : public SweepObserver, public CheckObserver {
 public:
  PublishingObserver(const EventPublisher& publish, absl::Time start)
      : publish_(publish), start_(start) {}
  void OnRepDone(int reps_done, int reps_total) override {
    publish_(ProgressEvent(reps_done, reps_total, absl::ToDoubleSeconds(absl::Now() - start_)));
  }
  void OnRow(const ArmRow& row) override { publish_(RowEvent(row)); }
  void OnCheck(const KernelCheckResult& result) override { publish_(CheckEvent(result)); }
  void OnTelemetry(const TelemetrySample& sample) override {
    v1::JobEvent event;
    *event.mutable_telemetry() = ReadingToProto(sample);
    publish_(std::move(event));
  }

 private:
  const EventPublisher& publish_;
  absl::Time start_;
};

}  // namespace

JobOutcome ExecuteJob(const v1::SubmitRequest& request, const std::string& artifact_dir,
                      const SweepLimits& limits, Backend& backend, const EventPublisher& publish,
                      const std::atomic<bool>& cancelled) {
  JobOutcome outcome;
  absl::StatusOr<JobSpec> job = ResolveJob(request, limits);
  if (!job.ok()) {
    outcome.status = job.status();
    return outcome;
  }
  publish(StartedEvent(backend.Description(), job->spec));
  PublishingObserver observer(publish, absl::Now());
  if (job->kind == JobKind::kCheck) {
    absl::StatusOr<std::vector<KernelCheckResult>> checks =
        RunExactnessCheck(job->spec, artifact_dir, backend, observer, cancelled);
    outcome.status = checks.status();
    if (checks.ok()) {
      outcome.results = static_cast<int>(checks->size());
      const int64_t failed = std::count_if(checks->begin(), checks->end(),
                                           [](const KernelCheckResult& r) { return !r.passed; });
      if (failed > 0) {
        outcome.status = absl::DataLossError(absl::StrFormat(
            "%d of %d kernel checks failed the exactness tolerance", failed, outcome.results));
      }
    }
    return outcome;
  }
  absl::StatusOr<SweepOutcome> sweep = RunSweep(job->spec, backend, observer, cancelled);
  outcome.status = sweep.status();
  if (sweep.ok()) {
    outcome.results = static_cast<int>(sweep->rows.size());
    outcome.reference_section_us = sweep->reference_section_us;
  }
  return outcome;
}

}  // namespace gpuprobe
