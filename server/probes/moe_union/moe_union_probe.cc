#include "server/probes/moe_union/moe_union_probe.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "server/probes/job_events.h"
#include "server/probes/moe_union/exactness.h"
#include "server/probes/moe_union/moe_union_mapping.h"
#include "server/probes/moe_union/sweep_runner.h"
#include "server/probes/param_text.h"
#include "server/probes/results.h"

namespace gpuprobe {
namespace {

v1::ProbeInfo MakeInfo(const SweepLimits& l) {
  v1::ProbeInfo info;
  info.set_name("moe-union");
  info.set_description(
      "MoE routed-union cost: the routed section's time as the distinct experts of a fixed "
      "number of (token, expert) slots shrink (NVFP4 gate+up and down kernels)");
  info.set_params_type(v1::SweepRequest::descriptor()->full_name());
  info.set_check_params_type(v1::CheckRequest::descriptor()->full_name());
  info.set_has_check(true);
  const std::string experts = absl::StrCat("1..", l.max_experts);
  const std::string width = absl::StrCat("16..", l.max_width, ", a multiple of 16");
  const std::string selected = absl::StrCat("1..", l.max_selected, ", at most experts");
  const std::string t = absl::StrCat("1..", l.max_t);
  const std::string reps = absl::StrCat("2..", l.max_reps);
  for (v1::ProbeParam p : {
           Param("experts", "an integer", "512", experts.c_str(), "experts in the weight banks"),
           Param("hidden", "an integer", "2560", width.c_str(), "model width"),
           Param("ff", "an integer", "640", width.c_str(), "expert intermediate width"),
           Param("selected", "an integer", "10", selected.c_str(), "experts each token selects"),
           Param("t_max", "an integer", "6", t.c_str(), "sweep t = 1..t_max"),
           Param("t_values", "a comma-separated list of integers", "", t.c_str(),
                 "explicit token counts (instead of t_max)"),
           Param("unions", "a comma-separated list of integers",
                 "selected, 2*selected, ..., t*selected",
                 "each in [selected, min(t*selected, experts)]", "union sizes, for every t"),
           Param("reps", "an integer", "20", reps.c_str(), "reps per arm, rep 0 discarded"),
           Param("timing", "one of events|graph", "events", "", "how launches are timed"),
           Param("cache", "one of warm|cold", "warm", "", "cache state before each launch"),
           Param("variants", "a comma-separated list of per-slot|union|floor|floor-distinct",
                 "per-slot", "", "kernel variants"),
           Param("seed", "an integer", "1", "", "seed of banks, activations and routing"),
           Param("order", "one of fixed|rotate|shuffle", "fixed", "", "arm order within a rep"),
           Param("require_clean", "true or false", "false", "",
                 "fail at the first disturbed telemetry reading"),
       }) {
    *info.add_params() = p;
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

MoeUnionProbe::MoeUnionProbe(SweepLimits limits) : limits_(limits), info_(MakeInfo(limits)) {}

absl::StatusOr<google::protobuf::Any> MoeUnionProbe::Resolve(
    const v1::ProbeRequest& request) const {
  google::protobuf::Any resolved;
  if (request.check()) {
    v1::CheckRequest check;
    RETURN_IF_ERROR(UnpackParams(request, check));
    if (!check.labels().empty()) {
      return absl::InvalidArgumentError("params.labels: a probe request's labels are its own");
    }
    if (!check.has_seed()) check.set_seed(FreshSeed());  // every attempt checks the same
    ASSIGN_OR_RETURN(SweepOptions options, CheckOptionsFromProto(check));
    options.labels.insert(request.labels().begin(), request.labels().end());
    ASSIGN_OR_RETURN(SweepSpec spec, ResolveSweep(options, limits_));
    resolved.PackFrom(FilledCheckRequest(spec, check.dump()));
    return resolved;
  }
  v1::SweepRequest sweep;
  RETURN_IF_ERROR(UnpackParams(request, sweep));
  if (!sweep.labels().empty()) {
    return absl::InvalidArgumentError("params.labels: a probe request's labels are its own");
  }
  ASSIGN_OR_RETURN(SweepOptions options, SweepOptionsFromProto(sweep));
  options.labels.insert(request.labels().begin(), request.labels().end());
  ASSIGN_OR_RETURN(SweepSpec spec, ResolveSweep(options, limits_));
  resolved.PackFrom(FilledSweepRequest(spec));
  return resolved;
}

absl::StatusOr<SweepSpec> MoeUnionSpecOf(const google::protobuf::Any& resolved, bool check) {
  if (check) {
    v1::CheckRequest request;
    if (!resolved.UnpackTo(&request)) {
      return absl::DataLossError("resolved: not the moe-union check's CheckRequest");
    }
    return SpecOfFilled(request);
  }
  v1::SweepRequest request;
  if (!resolved.UnpackTo(&request)) {
    return absl::DataLossError("resolved: not the moe-union sweep's SweepRequest");
  }
  return SpecOfFilled(request);
}

absl::StatusOr<ProbePlan> MoeUnionProbe::Plan(const google::protobuf::Any& resolved, bool check,
                                              const Backend& device) const {
  ASSIGN_OR_RETURN(SweepSpec spec, MoeUnionSpecOf(resolved, check));
  RETURN_IF_ERROR(CheckFitsBackend(spec, device));
  ProbePlan plan{.device_seconds = EstimateDeviceSeconds(spec, device)};
  v1::CheckRequest request;
  if (check && resolved.UnpackTo(&request) && request.dump()) {
    plan.artifact_bytes = EstimateDumpBytes(spec);
  }
  return plan;
}

JobOutcome MoeUnionProbe::Run(const ProbeRun& run, Backend& device, const EventPublisher& publish,
                              const std::atomic<bool>& cancelled) const {
  JobOutcome outcome;
  absl::StatusOr<SweepSpec> spec = MoeUnionSpecOf(run.resolved, run.check);
  if (!spec.ok()) {
    outcome.status = spec.status();
    return outcome;
  }
  v1::JobEvent started = StartedEvent(Name(), device.Description(), run.resolved);
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
