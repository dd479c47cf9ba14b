// The timers: one sample of a probe's launch on a device, in microseconds, from the device's
// primitives (marks, capture and replay, memory). The policy is here, the same for every probe
// and every device:
// - events: one launch between two marks (the host's launch overhead included, as the seed
//   measured);
// - graph: `graph_launches` launches captured once (kept with the launch) and replayed; the
//   sample is their mean, so the host's launch of each kernel is not timed;
// - cold: the device's last-level cache overwritten (ColdCache) before each launch, outside the
//   timed region: in graph mode a pair of marks brackets each launch inside the graph.
// - injected wait (the device's injected_wait_ns(), testing only): one wait inside every
//   sample's timed region, after its first launch; a graph sample, the mean of its
//   `graph_launches` launches, grows by that share of the wait.
// On cuda the marks are CUDA events and a capture is a CUDA graph; on the cpu the marks read the
// timing thread's CPU time (the host timer) and a replay runs the launches again.
//
//   LaunchTimer timer(device);
//   ASSIGN_OR_RETURN(double us, timer.Time(launch, {.timing = TimingMode::kGraph}));
#pragma once

#include "absl/status/statusor.h"
#include "server/device/backend.h"

namespace gpuprobe {

class LaunchTimer {
 public:
  explicit LaunchTimer(Backend& device) : device_(device) {}
  absl::StatusOr<double> Time(DeviceLaunch& launch, const TimingOptions& options);

 private:
  Backend& device_;
};

}  // namespace gpuprobe
