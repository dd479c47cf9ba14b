// The command probe: an executable the daemon's operator registered (command_registrations.h),
// run as a job that holds its device alone, with CUDA_VISIBLE_DEVICES set to it, its declared
// parameters as environment variables or arguments, and its time and output bounded. Its stdout,
// the seed probe's kind of table, becomes one Result per row (result_table.h); its whole stdout
// and stderr are kept as the job's artifacts. Telemetry is sampled while it runs, its own
// processes not counted foreign. A probe that still takes the old flock runs as it did.
#pragma once

#include <vector>

#include "server/probes/command/command_probe.pb.h"
#include "server/probes/probe.h"

namespace gpuprobe {

class CommandProbe final : public Probe {
 public:
  explicit CommandProbe(std::vector<v1::CommandRegistration> commands);

  const v1::ProbeInfo& Info() const override { return info_; }
  absl::StatusOr<ProbeSpec> Resolve(const v1::ProbeRequest& request) const override;
  absl::StatusOr<ProbePlan> Plan(const google::protobuf::Message& spec, bool check,
                                 const Backend& device) const override;
  JobOutcome Run(const ProbeRun& run, Backend& device, const EventPublisher& publish,
                 const std::atomic<bool>& cancelled) const override;

 private:
  // The registration a resolved spec names.
  absl::StatusOr<const v1::CommandRegistration*> Find(const v1::CommandProbeParams& params) const;

  const std::vector<v1::CommandRegistration> commands_;
  const v1::ProbeInfo info_;
};

}  // namespace gpuprobe
