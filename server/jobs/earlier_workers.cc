#include "server/jobs/earlier_workers.h"

#include "absl/strings/match.h"
#include "absl/time/clock.h"

namespace gpuprobe {

std::vector<int> AwaitEarlierWorkersGone(Backend& device, absl::Duration wait) {
  const absl::Time deadline = absl::Now() + wait;
  for (;;) {
    const std::optional<TelemetrySample> reading = device.SampleTelemetry();
    std::vector<int> workers;
    if (reading.has_value()) {
      for (const TelemetrySample::Process& p : reading->foreign_processes) {
        if (absl::EndsWith(p.name, kWorkerProcessName)) workers.push_back(p.pid);
      }
    }
    if (workers.empty() || absl::Now() >= deadline) return workers;
    absl::SleepFor(absl::Milliseconds(100));
  }
}

}  // namespace gpuprobe
