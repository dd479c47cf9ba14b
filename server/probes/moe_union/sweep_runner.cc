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

// The scheduler's samples as rows take them: gate+up and down per arm.
std::vector<ArmSamples> SamplesOf(const Measurement& measured) {
  std::vector<ArmSamples> samples;
  for (const auto& launches : measured.samples) samples.push_back({launches[0], launches[1]});
  return samples;
}

// Each arm's section in each block: its gate+up median plus its down median there, the noise
// between placements that comparisons across jobs take.
std::vector<double> BlockSections(const Measurement& measured, size_t arm) {
  const std::vector<std::vector<double>>& medians = measured.block_medians[arm];
  std::vector<double> sections(medians[0].size());
  for (size_t b = 0; b < sections.size(); ++b) sections[b] = medians[0][b] + medians[1][b];
  return sections;
}

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

absl::StatusOr<SweepOutcome> RunSweep(const SweepSpec& spec, Backend& backend,
                                      SweepObserver& observer, const std::atomic<bool>& cancelled) {
  ASSIGN_OR_RETURN(MoeArms * device_code, MoeArmsOn(backend));
  return RunSweep(spec, backend, *device_code, observer, cancelled);
}

absl::StatusOr<SweepOutcome> RunSweep(const SweepSpec& spec, Backend& backend, MoeArms& device_code,
                                      SweepObserver& observer, const std::atomic<bool>& cancelled) {
  RETURN_IF_ERROR(CheckFitsBackend(spec, backend));
  const std::vector<Arm> arms = ExpandArms(spec);
  RETURN_IF_ERROR(device_code.LoadBanks(spec.geometry, spec.seed));
  std::vector<ArmInputs> inputs;
  std::vector<ArmReadBytes> reads;
  for (const Arm& arm : arms) {
    ASSIGN_OR_RETURN(ArmInputs arm_inputs, MakeArmInputs(spec, arm));
    reads.push_back(ReadBytes(spec.geometry, arm, arm_inputs.sel));
    inputs.push_back(std::move(arm_inputs));
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
    measurement.arms.push_back({.timing = {.timing = spec.timing,
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
  Measurement partial;
  absl::StatusOr<Measurement> timed =
      TimeArms(measurement, place, backend, observer, cancelled, &partial);
  device_code.ReleaseArms();
  const RowContext context{.device = backend.Description(),
                           .calibrated_read_tbps = backend.Details().calibrated_read_tbps};
  if (!timed.ok()) {
    // The reps that completed before a cancel still make rows (with fewer kept reps).
    if (absl::IsCancelled(timed.status()) && partial.kept_reps > 0) {
      std::vector<ArmRow> rows = BuildRows(spec, arms, SamplesOf(partial), reads, context);
      for (size_t i = 0; i < rows.size(); ++i) {
        rows[i].disturbance = partial.disturbance;
        rows[i].block_section_us = BlockSections(partial, i);
        observer.OnRow(rows[i]);
      }
    }
    return timed.status();
  }
  SweepOutcome outcome{.rows = BuildRows(spec, arms, SamplesOf(*timed), reads, context)};
  for (size_t i = 0; i < outcome.rows.size(); ++i) {
    ArmRow& row = outcome.rows[i];
    row.disturbance = timed->disturbance;
    row.sampling_end = timed->ended_by;
    row.block_section_us = BlockSections(*timed, i);
  }
  if (std::optional<int> ref = ReferenceArm(spec, arms)) {
    outcome.reference_section_us = outcome.rows[*ref].section_us;
  }
  for (const ArmRow& row : outcome.rows) observer.OnRow(row);
  return outcome;
}

}  // namespace gpuprobe
