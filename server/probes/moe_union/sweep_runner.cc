#include "server/probes/moe_union/sweep_runner.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/seeded_rng.h"
#include "common/status_macros.h"
#include "kernels/moe_banks.h"
#include "kernels/slot_groups.h"
#include "server/probes/measure_arms.h"
#include "server/probes/moe_union/moe_union_mapping.h"
#include "server/probes/moe_union/routing.h"

namespace gpuprobe {
namespace {

// Stream tags so that routing, x and h of one arm come from unrelated streams.
constexpr uint64_t kActivationStream = 0x78;
constexpr uint64_t kDownInputStream = 0x68;

}  // namespace

absl::StatusOr<ArmInputs> MakeArmInputs(const SweepSpec& spec, const Arm& arm) {
  const MoeGeometry& g = spec.geometry;
  ArmInputs inputs{.variant = arm.variant};
  ASSIGN_OR_RETURN(inputs.sel, ExactUnionRouting(g.experts, g.selected, arm.t, arm.union_size,
                                                 MixSeed(spec.seed, arm.t, arm.union_size)));
  inputs.x = SynthesizeActivations(int64_t{arm.t} * g.hidden,
                                   MixSeed(spec.seed, arm.t, kActivationStream));
  inputs.h = SynthesizeActivations(int64_t{arm.slots} * g.ff,
                                   MixSeed(spec.seed, arm.slots, kDownInputStream));
  return inputs;
}

namespace {

ArmReadBytes ReadBytes(const MoeGeometry& g, const Arm& arm, const std::vector<int32_t>& sel) {
  const int64_t experts_read = arm.variant == KernelVariant::kUnion
                                   ? UnionGroups(sel).groups()
                                   : static_cast<int64_t>(FloorExperts(arm.variant, sel).size());
  return {experts_read * GateUpExpertBytes(g), experts_read * DownExpertBytes(g)};
}

double Gib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 30); }

}  // namespace

absl::Status CheckFitsBackend(const SweepSpec& spec, const Backend& backend) {
  for (KernelVariant v : spec.variants) {
    RETURN_IF_ERROR(CheckMoeVariant(backend.Name(), v));
    RETURN_IF_ERROR(CheckMoeGeometry(backend.Name(), spec.geometry, v));
  }
  const int64_t need = EstimateDeviceBytes(spec, ExpandArms(spec));
  const int64_t have = backend.MemoryCapacityBytes();
  if (need > have) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "experts, hidden, ff: the sweep needs about %.2f GiB of device memory (banks of %d "
        "experts x %d hidden x %d ff, plus arm buffers), more than the %.2f GiB the %s backend "
        "offers",
        Gib(need), spec.geometry.experts, spec.geometry.hidden, spec.geometry.ff, Gib(have),
        backend.Name()));
  }
  return absl::OkStatus();
}

double EstimateDeviceSeconds(const SweepSpec& spec, const Backend& backend) {
  const double tbps = backend.Details().calibrated_read_tbps;
  const double bytes_per_s = tbps > 0.0 ? tbps * 1e12 : 1e9;
  const int launches = spec.timing == TimingMode::kGraph ? kGraphLaunchesPerSample : 1;
  const int64_t expert_bytes = GateUpExpertBytes(spec.geometry) + DownExpertBytes(spec.geometry);
  double seconds = 0.0;
  for (const Arm& arm : ExpandArms(spec)) {
    seconds += 2 * 10e-6 + static_cast<double>(arm.slots) * expert_bytes / bytes_per_s;
  }
  seconds *= spec.reps * launches * spec.blocks;
  // Sampling until precise stops after the rep that passes each block's share of max_seconds.
  return spec.precision > 0.0 ? std::max(seconds, spec.max_seconds + seconds / spec.reps) : seconds;
}

JobOutcome RunSweep(const SweepSpec& spec, Backend& backend, const EventPublisher& publish,
                    const std::atomic<bool>& cancelled) {
  absl::StatusOr<MoeArms*> device_code = MoeArmsOn(backend);
  if (!device_code.ok()) return {.status = device_code.status()};
  return RunSweep(spec, backend, **device_code, publish, cancelled);
}

JobOutcome RunSweep(const SweepSpec& spec, Backend& backend, MoeArms& device_code,
                    const EventPublisher& publish, const std::atomic<bool>& cancelled) {
  if (absl::Status fits = CheckFitsBackend(spec, backend); !fits.ok()) return {.status = fits};
  const std::vector<Arm> arms = ExpandArms(spec);
  if (absl::Status loaded = device_code.LoadBanks(spec.geometry, spec.seed); !loaded.ok()) {
    return {.status = loaded};
  }
  std::vector<ArmInputs> inputs;
  std::vector<ArmReadBytes> reads;
  for (const Arm& arm : arms) {
    absl::StatusOr<ArmInputs> arm_inputs = MakeArmInputs(spec, arm);
    if (!arm_inputs.ok()) return {.status = arm_inputs.status()};
    reads.push_back(ReadBytes(spec.geometry, arm, arm_inputs->sel));
    inputs.push_back(*std::move(arm_inputs));
  }
  // Each arm's two launches, gate+up then down, timed alike.
  MeasurementSpec measurement{.reps = spec.reps,
                              .order = spec.order,
                              .seed = spec.seed,
                              .require_clean = spec.require_clean,
                              .sampling = {.precision = spec.precision,
                                           .max_seconds = spec.max_seconds,
                                           .max_reps = MostReps(spec, SweepLimits{})},
                              .blocks = spec.blocks};
  for (size_t i = 0; i < arms.size(); ++i) {
    const std::vector<v1::AxisValue> axes = ArmAxes(arms[i]);
    measurement.arms.push_back({.axes = {axes.begin(), axes.end()},
                                .timing = {.timing = spec.timing,
                                           .cache = spec.cache,
                                           .graph_launches = kGraphLaunchesPerSample},
                                .launches = {{.metric = "gu_us", .bytes_read = reads[i].gu},
                                             {.metric = "down_us", .bytes_read = reads[i].down}}});
  }
  // Each block: the banks moved to fresh memory, every arm prepared on them.
  const PlaceLaunches place = [&](int) -> absl::StatusOr<std::vector<std::vector<DeviceLaunch*>>> {
    RETURN_IF_ERROR(device_code.PlaceBanks());
    std::vector<std::vector<DeviceLaunch*>> launches;
    for (const ArmInputs& arm_inputs : inputs) {
      ASSIGN_OR_RETURN(const ArmHandle handle, device_code.PrepareArm(arm_inputs));
      ASSIGN_OR_RETURN(DeviceLaunch * gate_up, device_code.Launch(handle, MoeKernel::kGateUpSilu));
      ASSIGN_OR_RETURN(DeviceLaunch * down, device_code.Launch(handle, MoeKernel::kDown));
      launches.push_back({gate_up, down});
    }
    return launches;
  };
  JobOutcome outcome =
      MeasureArms(measurement, place, backend, publish, cancelled,
                  [&](const Measurement& measured, std::vector<v1::Result>& results) {
                    DeriveArmValues(spec, arms, reads, measured, results);
                  });
  device_code.ReleaseArms();
  return outcome;
}

}  // namespace gpuprobe
