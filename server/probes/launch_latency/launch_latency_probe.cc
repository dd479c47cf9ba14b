#include "server/probes/launch_latency/launch_latency_probe.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/param_spec.h"
#include "common/param_text.h"
#include "common/status_macros.h"
#include "server/measure/interleaved.h"
#include "server/probes/job_events.h"
#include "server/probes/launch_latency/empty_launch.h"
#include "server/probes/launch_latency/launch_latency.pb.h"
#include "server/probes/measure_arms.h"
#include "server/probes/results.h"

namespace gpuprobe {
namespace {

constexpr double kMaxSeconds = 600;         // as the max_seconds field declares
constexpr int kMaxReps = 100000;            // as the reps field declares
constexpr int64_t kMaxArmReps = 1'000'000;  // every arm's reps together
constexpr double kLaunchSeconds = 10e-6;    // one launch, for the device-time estimate

v1::ProbeInfo MakeInfo() {
  v1::ProbeInfo info;
  info.set_name("launch-latency");
  info.set_description(
      "one launch of an empty kernel, timed between events (the host's launch included) and "
      "replayed in a CUDA graph: the fixed cost under every kernel time");
  info.set_params_type(v1::LaunchLatencyParams::descriptor()->full_name());
  for (v1::ProbeParam& p : DeclaredParams(*v1::LaunchLatencyParams::descriptor())) {
    *info.add_params() = std::move(p);
  }
  *info.add_axes() = Quantity("grid_blocks", "", "blocks of the empty kernel's grid");
  *info.add_axes() = Quantity("timing", "", "events or graph");
  *info.add_metrics() = Quantity("launch_us", "us", "one launch of the empty kernel");
  return info;
}

absl::StatusOr<SamplingRule> SamplingRuleOf(const v1::LaunchLatencyParams& p) {
  return ResolveSamplingRule(
      p.has_precision() ? std::optional<double>(p.precision()) : std::nullopt,
      p.has_max_seconds() ? std::optional<double>(p.max_seconds()) : std::nullopt, kMaxSeconds);
}

// Each value once, in the order first given.
template <typename Repeated>
void Deduplicate(Repeated& values) {
  std::vector<typename Repeated::value_type> seen;
  for (const auto& v : values) {
    if (std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
  }
  values.Clear();
  for (const auto& v : seen) values.Add(v);
}

// The arms, in run order: grid sizes as given, each in every timing.
struct LatencyArm {
  uint32_t blocks = 1;
  v1::TimingMode timing = v1::TIMING_MODE_EVENTS;
};

std::vector<LatencyArm> Arms(const v1::LaunchLatencyParams& p) {
  std::vector<LatencyArm> arms;
  for (const uint32_t blocks : p.grid_sizes()) {
    for (const int timing : p.timings()) {
      arms.push_back({blocks, static_cast<v1::TimingMode>(timing)});
    }
  }
  return arms;
}

std::vector<v1::AxisValue> Axes(const LatencyArm& arm) {
  return {IntAxis("grid_blocks", arm.blocks),
          TextAxis("timing", std::string(TimingName(TimingFromProto(arm.timing))))};
}

}  // namespace

LaunchLatencyProbe::LaunchLatencyProbe() : info_(MakeInfo()) {}

absl::StatusOr<ProbeSpec> LaunchLatencyProbe::Resolve(const v1::ProbeRequest& request) const {
  v1::LaunchLatencyParams p;
  RETURN_IF_ERROR(UnpackParams(request, p));
  RETURN_IF_ERROR(CompleteParams(p));
  Deduplicate(*p.mutable_timings());
  Deduplicate(*p.mutable_grid_sizes());
  ASSIGN_OR_RETURN(const SamplingRule rule, SamplingRuleOf(p));
  if (rule.precision > 0.0) p.set_max_seconds(rule.max_seconds);
  const int64_t arms = static_cast<int64_t>(Arms(p).size());
  if (arms * p.reps() > kMaxArmReps) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reps: %d arms x %d reps is more than %d launches", arms, p.reps(), kMaxArmReps));
  }
  return std::make_shared<const v1::LaunchLatencyParams>(std::move(p));
}

absl::StatusOr<ProbePlan> LaunchLatencyProbe::Plan(const google::protobuf::Message& spec,
                                                   bool check, const Backend&) const {
  if (check) return absl::InvalidArgumentError("check: launch-latency has no exactness check");
  ASSIGN_OR_RETURN(const v1::LaunchLatencyParams* params, SpecAs<v1::LaunchLatencyParams>(spec));
  const v1::LaunchLatencyParams& p = *params;
  double rep_seconds = 0.0;  // one rep of every arm
  for (const LatencyArm& arm : Arms(p)) {
    rep_seconds +=
        kLaunchSeconds * (arm.timing == v1::TIMING_MODE_GRAPH ? kGraphLaunchesPerSample : 1);
  }
  // Sampling until precise stops after the rep that passes max_seconds.
  return ProbePlan{.device_seconds = p.has_precision() ? std::max(rep_seconds * p.reps(),
                                                                  p.max_seconds() + rep_seconds)
                                                       : rep_seconds * p.reps()};
}

JobOutcome LaunchLatencyProbe::Run(const ProbeRun& run, Backend& device,
                                   const EventPublisher& publish,
                                   const std::atomic<bool>& cancelled) const {
  absl::StatusOr<const v1::LaunchLatencyParams*> params =
      SpecAs<v1::LaunchLatencyParams>(*run.spec);
  if (!params.ok()) return JobOutcome{.status = params.status()};
  const v1::LaunchLatencyParams& p = **params;
  absl::StatusOr<SamplingRule> sampling = SamplingRuleOf(p);
  if (!sampling.ok()) return JobOutcome{.status = sampling.status()};
  const std::vector<LatencyArm> arms = Arms(p);
  v1::JobEvent started = StartedEvent(Name(), device.Description(), p);
  for (const LatencyArm& arm : arms) {
    v1::PlannedArm* planned = started.mutable_started()->add_arms();
    for (const v1::AxisValue& axis : Axes(arm)) *planned->add_axes() = axis;
  }
  publish(std::move(started));

  MeasurementSpec spec{.reps = static_cast<int>(p.reps()),
                       .order = OrderFromProto(p.order()),
                       .seed = p.seed(),
                       .require_clean = p.require_clean(),
                       .sampling = *sampling};
  spec.sampling.max_reps = static_cast<int>(
      std::max<int64_t>(p.reps(), std::min<int64_t>(kMaxReps, kMaxArmReps / arms.size())));
  std::vector<std::unique_ptr<DeviceLaunch>> kernels;  // one per arm: each keeps its own graph
  std::vector<std::vector<DeviceLaunch*>> launches;
  for (const LatencyArm& arm : arms) {
    absl::StatusOr<std::unique_ptr<DeviceLaunch>> kernel =
        EmptyLaunchOn(device, arm.blocks, static_cast<int>(p.block_threads()));
    if (!kernel.ok()) return JobOutcome{.status = kernel.status()};
    launches.push_back({kernel->get()});
    kernels.push_back(*std::move(kernel));
    spec.arms.push_back({.axes = Axes(arm),
                         .timing = {.timing = TimingFromProto(arm.timing),
                                    .graph_launches = kGraphLaunchesPerSample},
                         .launches = {{.metric = "launch_us"}}});
  }
  return MeasureArms(
      spec, [&](int) { return launches; }, device, publish, cancelled);
}

}  // namespace gpuprobe
