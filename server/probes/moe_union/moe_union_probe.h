// The MoE routed-union cost probe (DESIGN.md, seed/moe_union_probe.rs): at a fixed number of
// (token, expert) slots, how the routed section's cost moves with the number of distinct experts
// those slots name. Its parameters are a SweepRequest (a check's a CheckRequest), its resolved
// spec the same message with every field set. It reports one Result per arm as every probe does
// (v1 clients see them as Rows: moe_union_v1_view.h), and KernelCheck events for its exactness
// check.
#pragma once

#include "server/probes/moe_union/sweep_spec.h"
#include "server/probes/probe.h"

namespace gpuprobe {

class MoeUnionProbe final : public Probe {
 public:
  explicit MoeUnionProbe(SweepLimits limits);

  const v1::ProbeInfo& Info() const override { return info_; }
  absl::StatusOr<ProbeSpec> Resolve(const v1::ProbeRequest& request) const override;
  absl::StatusOr<ProbePlan> Plan(const google::protobuf::Message& spec, bool check,
                                 const Backend& device) const override;
  JobOutcome Run(const ProbeRun& run, Backend& device, const EventPublisher& publish,
                 const std::atomic<bool>& cancelled) const override;

 private:
  const SweepLimits limits_;
  const v1::ProbeInfo info_;
};

// The engine's spec of a resolved moe-union job (a SweepRequest, or a CheckRequest where
// `check`), as MoeUnionProbe::Resolve made it: INTERNAL for another message.
absl::StatusOr<SweepSpec> MoeUnionSpecOf(const google::protobuf::Message& spec, bool check);

}  // namespace gpuprobe
