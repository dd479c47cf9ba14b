#include "server/jobs/job_execution.h"

namespace gpuprobe {

JobOutcome ExecuteJob(const ProbeRegistry& probes, const std::string& probe, const ProbeRun& run,
                      Backend& backend, const EventPublisher& publish,
                      const std::atomic<bool>& cancelled) {
  absl::StatusOr<const Probe*> found = probes.Get(probe);
  if (!found.ok()) return JobOutcome{.status = found.status()};
  return (*found)->Run(run, backend, publish, cancelled);
}

}  // namespace gpuprobe
