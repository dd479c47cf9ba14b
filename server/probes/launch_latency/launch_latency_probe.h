// The launch-latency probe: the time of one launch of an empty kernel, timed between two events
// (the host's launch included, as the seed's events mode times every kernel) and as the mean of
// 10 launches replayed in a CUDA graph, for grids of one or more sizes. It prices the fixed
// cost under every kernel time, and shows why graph figures are smaller than event ones
// (DESIGN.md: 4.75 us against 0.50 us on an H200). Its device code is its own (empty_launch.h).
#pragma once

#include "server/probes/probe.h"

namespace gpuprobe {

class LaunchLatencyProbe final : public Probe {
 public:
  LaunchLatencyProbe();

  const v1::ProbeInfo& Info() const override { return info_; }
  absl::StatusOr<ProbeSpec> Resolve(const v1::ProbeRequest& request) const override;
  absl::StatusOr<ProbePlan> Plan(const google::protobuf::Message& spec, bool check,
                                 const Backend& device) const override;
  JobOutcome Run(const ProbeRun& run, Backend& device, const EventPublisher& publish,
                 const std::atomic<bool>& cancelled) const override;

 private:
  const v1::ProbeInfo info_;
};

}  // namespace gpuprobe
