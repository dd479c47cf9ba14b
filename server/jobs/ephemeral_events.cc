#include "server/jobs/ephemeral_events.h"

namespace gpuprobe {

bool EphemeralEvents::Store(const v1::JobEvent& event, absl::Time now) {
  if (event.has_progress()) {
    const v1::JobProgress& p = event.progress();
    if (p.reps_done() < p.reps_total() && now - progress_stored_ < every_) return false;
    progress_stored_ = now;
    return true;
  }
  if (event.has_telemetry()) {
    const v1::TelemetryReading& t = event.telemetry();
    const bool disturbed = !t.throttle_reasons().empty() || !t.foreign_processes().empty();
    if (!disturbed && now - telemetry_stored_ < every_) return false;
    telemetry_stored_ = now;
    return true;
  }
  return true;
}

}  // namespace gpuprobe
