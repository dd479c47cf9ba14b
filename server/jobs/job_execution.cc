#include "server/jobs/job_execution.h"

namespace gpuprobe {

JobOutcome ExecuteJob(const ProbeRegistry& probes, const v1::WorkerRunJob& job, Backend& backend,
                      const EventPublisher& publish, const std::atomic<bool>& cancelled) {
  absl::StatusOr<const Probe*> probe = probes.Get(job.probe());
  if (!probe.ok()) return JobOutcome{.status = probe.status()};
  absl::StatusOr<ProbeSpec> spec = (*probe)->Open(job.resolved(), job.check());
  if (!spec.ok()) return JobOutcome{.status = spec.status()};
  const ProbeRun run{.job_id = job.job_id(),
                     .spec = *std::move(spec),
                     .check = job.check(),
                     .artifact_dir = job.artifact_dir(),
                     .modules = {job.modules().begin(), job.modules().end()}};
  return (*probe)->Run(run, backend, publish, cancelled);
}

}  // namespace gpuprobe
