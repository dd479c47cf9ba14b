#include "server/probes/moe_union/sweep_runner.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/seeded_rng.h"
#include "common/status_macros.h"
#include "kernels/moe_banks.h"
#include "kernels/slot_groups.h"
#include "server/measure/launch_timer.h"
#include "server/probes/moe_union/routing.h"

namespace gpuprobe {
namespace {

// Stream tags so that routing, x and h of one arm come from unrelated streams.
constexpr uint64_t kActivationStream = 0x78;
constexpr uint64_t kDownInputStream = 0x68;
// The stream of each block's shuffled arm order after the first (which keeps the spec's seed).
constexpr uint64_t kBlockOrderStream = 0x62;

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

// Progress over all blocks: block b's rep r is rep b * (the block's reps) + r of the job.
class BlockObserver final : public RepObserver {
 public:
  BlockObserver(RepObserver& job, int blocks) : job_(job), blocks_(blocks) {}
  void StartBlock(int block) { block_ = block; }
  void OnRepDone(int reps_done, int reps_total) override {
    job_.OnRepDone(block_ * reps_total + reps_done, blocks_ * reps_total);
  }
  void OnTelemetry(const TelemetrySample& sample) override { job_.OnTelemetry(sample); }

 private:
  RepObserver& job_;
  const int blocks_;
  int block_ = 0;
};

// One block: the banks moved to fresh memory, every arm prepared on them, and the interleaved
// reps (a shuffled order drawn again from the block's own seed; a share of max_seconds).
absl::StatusOr<Interleaved> RunBlock(const SweepSpec& spec, int block,
                                     const std::vector<ArmInputs>& inputs, MoeArms& device_code,
                                     LaunchTimer& timer, const TimingOptions& timing,
                                     Backend& backend, BlockObserver& observer,
                                     const std::atomic<bool>& cancelled, Interleaved& partial) {
  RETURN_IF_ERROR(device_code.PlaceBanks());
  // Each arm's two launches: gate+up, then down.
  std::vector<std::array<DeviceLaunch*, 2>> launches;
  for (const ArmInputs& arm_inputs : inputs) {
    ASSIGN_OR_RETURN(ArmHandle handle, device_code.PrepareArm(arm_inputs));
    ASSIGN_OR_RETURN(DeviceLaunch * gate_up, device_code.Launch(handle, MoeKernel::kGateUpSilu));
    ASSIGN_OR_RETURN(DeviceLaunch * down, device_code.Launch(handle, MoeKernel::kDown));
    launches.push_back({gate_up, down});
  }
  const TimeLaunchFn time = [&](int arm, int launch) {
    return timer.Time(*launches[arm][launch], timing);
  };
  const InterleavedSpec schedule{
      .arms = static_cast<int>(inputs.size()),
      .launches = 2,
      .reps = spec.reps,
      .order = spec.order,
      .seed = block == 0 ? spec.seed : MixSeed(spec.seed, block, kBlockOrderStream),
      .require_clean = spec.require_clean,
      .sampling = {.precision = spec.precision,
                   .max_seconds = spec.max_seconds / spec.blocks,
                   .max_reps = MostReps(spec, SweepLimits{})}};
  observer.StartBlock(block);
  return RunInterleaved(schedule, time, backend, observer, cancelled, &partial);
}

// What ended the job: the first block that ran out of time or reps, else how the last ended.
SamplingEnd JobEnd(SamplingEnd job, SamplingEnd block) {
  const auto bound = [](SamplingEnd e) {
    return e == SamplingEnd::kMaxSeconds || e == SamplingEnd::kMaxReps;
  };
  return bound(job) ? job : block;
}

// Adds block `index`'s kept samples to the job's, and each arm's section in the block (median
// gate+up + median down, as a row's) to `sections`. A disturbance names its block when the job
// has more than one.
void AddBlock(int index, int blocks, const Interleaved& block, Interleaved& job,
              std::vector<std::vector<double>>& sections) {
  if (block.kept_reps == 0) return;
  job.samples.resize(block.samples.size());
  for (size_t arm = 0; arm < block.samples.size(); ++arm) {
    job.samples[arm].resize(block.samples[arm].size());
    double section = 0.0;
    for (size_t launch = 0; launch < block.samples[arm].size(); ++launch) {
      const std::vector<double>& samples = block.samples[arm][launch];
      job.samples[arm][launch].insert(job.samples[arm][launch].end(), samples.begin(),
                                      samples.end());
      section += Summarize(samples).median;
    }
    sections[arm].push_back(section);
  }
  job.ended_by = job.kept_reps == 0 ? block.ended_by : JobEnd(job.ended_by, block.ended_by);
  job.kept_reps += block.kept_reps;
  if (job.disturbance.empty() && !block.disturbance.empty()) {
    job.disturbance =
        blocks == 1 ? block.disturbance : absl::StrCat("block ", index, ", ", block.disturbance);
  }
}

// The scheduler's samples as rows take them: gate+up and down per arm.
std::vector<ArmSamples> SamplesOf(const Interleaved& run) {
  std::vector<ArmSamples> samples;
  for (const auto& launches : run.samples) samples.push_back({launches[0], launches[1]});
  return samples;
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
  const RowContext context{.device = backend.Description(),
                           .calibrated_read_tbps = backend.Details().calibrated_read_tbps};
  const TimingOptions timing{
      .timing = spec.timing, .cache = spec.cache, .graph_launches = kGraphLaunchesPerSample};
  LaunchTimer timer(backend);
  BlockObserver block_observer(observer, spec.blocks);
  Interleaved all;
  std::vector<std::vector<double>> block_sections(arms.size());
  absl::Status status;
  for (int block = 0; block < spec.blocks && status.ok(); ++block) {
    Interleaved partial;
    absl::StatusOr<Interleaved> run = RunBlock(spec, block, inputs, device_code, timer, timing,
                                               backend, block_observer, cancelled, partial);
    if (run.ok()) {
      AddBlock(block, spec.blocks, *run, all, block_sections);
    } else {
      // The reps that completed still make rows (with fewer kept reps).
      if (absl::IsCancelled(run.status())) {
        AddBlock(block, spec.blocks, partial, all, block_sections);
      }
      status = run.status();
    }
  }
  device_code.ReleaseArms();
  if (!status.ok()) {
    if (absl::IsCancelled(status) && all.kept_reps > 0) {
      std::vector<ArmRow> rows = BuildRows(spec, arms, SamplesOf(all), reads, context);
      for (size_t i = 0; i < rows.size(); ++i) {
        rows[i].disturbance = all.disturbance;
        rows[i].block_section_us = block_sections[i];
        observer.OnRow(rows[i]);
      }
    }
    return status;
  }

  SweepOutcome outcome{.rows = BuildRows(spec, arms, SamplesOf(all), reads, context)};
  for (size_t i = 0; i < outcome.rows.size(); ++i) {
    ArmRow& row = outcome.rows[i];
    row.disturbance = all.disturbance;
    row.sampling_end = all.ended_by;
    row.block_section_us = block_sections[i];
  }
  if (std::optional<int> ref = ReferenceArm(spec, arms)) {
    outcome.reference_section_us = outcome.rows[*ref].section_us;
  }
  for (const ArmRow& row : outcome.rows) observer.OnRow(row);
  return outcome;
}

}  // namespace gpuprobe
