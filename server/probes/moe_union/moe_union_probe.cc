#include "server/probes/moe_union/moe_union_probe.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/param_spec.h"
#include "common/param_text.h"
#include "common/status_macros.h"
#include "server/probes/job_events.h"
#include "server/probes/moe_union/exactness.h"
#include "server/probes/moe_union/moe_union_mapping.h"
#include "server/probes/moe_union/sweep_runner.h"
#include "server/probes/results.h"

namespace gpuprobe {
namespace {

v1::ProbeInfo MakeInfo() {
  v1::ProbeInfo info;
  info.set_name("moe-union");
  info.set_description(
      "MoE routed-union cost: the routed section's time as the distinct experts of a fixed "
      "number of (token, expert) slots shrink (NVFP4 gate+up and down kernels)");
  info.set_params_type(v1::SweepRequest::descriptor()->full_name());
  info.set_check_params_type(v1::CheckRequest::descriptor()->full_name());
  info.set_has_check(true);
  for (v1::ProbeParam& p : DeclaredParams(*v1::SweepRequest::descriptor())) {
    *info.add_params() = std::move(p);
  }
  *info.add_axes() =
      Quantity("variant", "", "kernel variant: per-slot, union, floor or floor-distinct");
  *info.add_axes() = Quantity("t", "", "tokens in the chunk");
  *info.add_axes() = Quantity("slots", "", "(token, expert) pairs: t * selected");
  *info.add_axes() = Quantity("union", "", "distinct experts the slots name");
  *info.add_metrics() = Quantity("gu_us", "us", "gate+up kernel (sel_gu_silu) time");
  *info.add_metrics() = Quantity("down_us", "us", "down kernel (sel_down) time");
  *info.add_derived() = Quantity("gu_tbps", "TB/s", "gate+up bytes read / gu_us");
  *info.add_derived() =
      Quantity("gu_pct_of_read", "%",
               "gu_tbps as a share of the calibrated read (where the device has one)");
  *info.add_derived() = Quantity("down_tbps", "TB/s", "down bytes read / down_us");
  *info.add_derived() = Quantity("down_pct_of_read", "%", "down_tbps as a share of the read");
  *info.add_derived() = Quantity("section_us", "us", "gu_us + down_us");
  *info.add_derived() =
      Quantity("gu_bw_vs_union_tbps", "TB/s", "union x gate+up bytes per expert / gu_us");
  *info.add_derived() =
      Quantity("gu_bw_vs_slots_tbps", "TB/s", "slots x gate+up bytes per expert / gu_us");
  *info.add_derived() = Quantity("gu_read_bytes", "bytes",
                                 "bytes the gate+up kernel reads from the banks per launch");
  *info.add_derived() = Quantity("down_read_bytes", "bytes", "the same for the down kernel");
  *info.add_derived() = Quantity("vs_reference", "",
                                 "reference section / this section (a sweep with a reference "
                                 "row: t = max t, union = slots, per-slot)");
  *info.add_derived() = Quantity("vs_reference_low", "", "its 95% interval: lower bound");
  *info.add_derived() = Quantity("vs_reference_high", "", "its upper bound");
  return info;
}

// Forwards the exactness check's results as job events.
class PublishingObserver final : public CheckObserver {
 public:
  // `seed`: the job's, stamped on each check so that its line says how to reproduce it.
  PublishingObserver(const EventPublisher& publish, uint64_t seed)
      : publish_(publish), seed_(seed) {}
  void OnCheck(const KernelCheckResult& result) override {
    v1::JobEvent event = CheckEvent(result);
    event.mutable_check()->set_seed(seed_);
    publish_(std::move(event));
  }

 private:
  const EventPublisher& publish_;
  uint64_t seed_;
};

}  // namespace

MoeUnionProbe::MoeUnionProbe(SweepLimits limits) : limits_(limits), info_(MakeInfo()) {}

absl::StatusOr<ProbeSpec> MoeUnionProbe::Resolve(const v1::ProbeRequest& request) const {
  if (request.check()) {
    v1::CheckRequest check;
    RETURN_IF_ERROR(UnpackParams(request, check));
    if (!check.labels().empty()) {
      return absl::InvalidArgumentError("params.labels: a probe request's labels are its own");
    }
    RETURN_IF_ERROR(CompleteParams(check));
    if (!check.has_seed()) check.set_seed(FreshSeed());  // every attempt checks the same
    v1::SweepRequest sweep = SweepOfCheck(check);
    *sweep.mutable_labels() = request.labels();
    ASSIGN_OR_RETURN(SweepSpec spec, ResolveSweep(std::move(sweep), limits_));
    return std::make_shared<const v1::CheckRequest>(FilledCheckRequest(spec, check.dump()));
  }
  v1::SweepRequest sweep;
  RETURN_IF_ERROR(UnpackParams(request, sweep));
  if (!sweep.labels().empty()) {
    return absl::InvalidArgumentError("params.labels: a probe request's labels are its own");
  }
  *sweep.mutable_labels() = request.labels();
  ASSIGN_OR_RETURN(SweepSpec spec, ResolveSweep(std::move(sweep), limits_));
  return std::make_shared<const v1::SweepRequest>(FilledSweepRequest(spec));
}

absl::StatusOr<SweepSpec> MoeUnionSpecOf(const google::protobuf::Message& spec, bool check) {
  if (check) {
    ASSIGN_OR_RETURN(const v1::CheckRequest* request, SpecAs<v1::CheckRequest>(spec));
    return SpecOfFilled(*request);
  }
  ASSIGN_OR_RETURN(const v1::SweepRequest* request, SpecAs<v1::SweepRequest>(spec));
  return SpecOfFilled(*request);
}

absl::StatusOr<ProbePlan> MoeUnionProbe::Plan(const google::protobuf::Message& resolved, bool check,
                                              const Backend& device) const {
  ASSIGN_OR_RETURN(SweepSpec spec, MoeUnionSpecOf(resolved, check));
  RETURN_IF_ERROR(CheckFitsBackend(spec, device));
  ProbePlan plan{.device_seconds = EstimateDeviceSeconds(spec, device)};
  if (check) {
    ASSIGN_OR_RETURN(const v1::CheckRequest* request, SpecAs<v1::CheckRequest>(resolved));
    if (request->dump()) plan.artifact_bytes = EstimateDumpBytes(spec);
  }
  return plan;
}

JobOutcome MoeUnionProbe::Run(const ProbeRun& run, Backend& device, const EventPublisher& publish,
                              const std::atomic<bool>& cancelled) const {
  JobOutcome outcome;
  absl::StatusOr<SweepSpec> spec = MoeUnionSpecOf(*run.spec, run.check);
  if (!spec.ok()) {
    outcome.status = spec.status();
    return outcome;
  }
  v1::JobEvent started = StartedEvent(Name(), device.Description(), *run.spec);
  *started.mutable_started()->mutable_sweep() = ResolvedSweepToProto(*spec, ExpandArms(*spec));
  for (const v1::Arm& arm : started.started().sweep().arms()) {
    v1::PlannedArm* planned = started.mutable_started()->add_arms();
    for (const v1::AxisValue& axis : ArmAxes(arm)) *planned->add_axes() = axis;
  }
  publish(std::move(started));
  if (!run.check) return RunSweep(*spec, device, publish, cancelled);
  PublishingObserver observer(publish, spec->seed);
  absl::StatusOr<std::vector<KernelCheckResult>> checks =
      RunExactnessCheck(*spec, run.artifact_dir, device, observer, cancelled);
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

}  // namespace gpuprobe
