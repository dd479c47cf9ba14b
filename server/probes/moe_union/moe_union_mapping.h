// The moe-union probe's protos and its engine's types, both ways: requests in
// (SweepRequest, CheckRequest), resolved specs (the same messages with every field set) and
// events out (the started sweep, arms' axes, checks).
//
//   ASSIGN_OR_RETURN(SweepSpec spec, ResolveSweep(SweepOfCheck(check), SweepLimits{}));
//   v1::SweepRequest resolved = FilledSweepRequest(spec);
//   v1::JobEvent event = CheckEvent(result);
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/probes/moe_union/exactness.h"
#include "server/probes/moe_union/sweep_spec.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

// An exactness request (completed: CompleteParams) as the sweep that resolves it: its one t, its
// unions, variants and seed, and 2 reps (it times nothing).
v1::SweepRequest SweepOfCheck(const v1::CheckRequest& check);

// A resolved spec as the request that resolves to it with no default left to apply: what the
// daemon stores with the job when it accepts it.
v1::SweepRequest FilledSweepRequest(const SweepSpec& spec);
v1::CheckRequest FilledCheckRequest(const SweepSpec& spec, bool dump);
// The spec of a request that FilledSweepRequest (FilledCheckRequest) made, as it is: nothing
// resolved again. INVALID_ARGUMENT for an enum value this server does not know.
absl::StatusOr<SweepSpec> SpecOfFilled(const v1::SweepRequest& filled);
absl::StatusOr<SweepSpec> SpecOfFilled(const v1::CheckRequest& filled);

v1::KernelVariant VariantToProto(KernelVariant variant);

// An arm's axes, as moe-union's ProbeInfo declares them: variant, t, slots, union.
std::vector<v1::AxisValue> ArmAxes(const v1::Arm& arm);
std::vector<v1::AxisValue> ArmAxes(const Arm& arm);

v1::ResolvedSweep ResolvedSweepToProto(const SweepSpec& spec, const std::vector<Arm>& arms);
v1::JobEvent CheckEvent(const KernelCheckResult& result);

}  // namespace gpuprobe
