#include "server/probes/measure_arms.h"

#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/seeded_rng.h"
#include "common/status_macros.h"
#include "server/measure/bandwidth.h"
#include "server/measure/launch_timer.h"
#include "server/measure/statistics.h"
#include "server/probes/job_events.h"
#include "server/probes/results.h"

namespace gpuprobe {
namespace {

// The stream of each block's shuffled arm order after the first (which keeps the spec's seed).
constexpr uint64_t kBlockOrderStream = 0x62;

absl::Status CheckSpec(const MeasurementSpec& spec) {
  if (spec.arms.empty()) return absl::InvalidArgumentError("arms: none to measure");
  const size_t launches = spec.arms[0].launches.size();
  if (launches == 0) return absl::InvalidArgumentError("arms: an arm without launches");
  for (size_t i = 0; i < spec.arms.size(); ++i) {
    if (spec.arms[i].launches.size() != launches) {
      return absl::InvalidArgumentError(absl::StrFormat("arms: arm %d has %d launches, arm 0 %d", i,
                                                        spec.arms[i].launches.size(), launches));
    }
  }
  if (spec.reps < 2) {
    return absl::InvalidArgumentError(absl::StrFormat("reps: %d; at least 2", spec.reps));
  }
  if (spec.blocks < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("blocks: %d; at least 1", spec.blocks));
  }
  return absl::OkStatus();
}

// Progress over all blocks: block b's rep r is rep b * (a block's reps) + r of the job.
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

// Progress and telemetry as job events.
class PublishingObserver final : public RepObserver {
 public:
  explicit PublishingObserver(const EventPublisher& publish)
      : publish_(publish), start_(absl::Now()) {}
  void OnRepDone(int reps_done, int reps_total) override {
    publish_(ProgressEvent(reps_done, reps_total, absl::ToDoubleSeconds(absl::Now() - start_)));
  }
  void OnTelemetry(const TelemetrySample& sample) override { publish_(TelemetryEvent(sample)); }

 private:
  const EventPublisher& publish_;
  const absl::Time start_;
};

// What ended the job: the first block that ran out of time or reps, else how the last ended.
SamplingEnd JobEnd(SamplingEnd job, SamplingEnd block) {
  const auto bound = [](SamplingEnd e) {
    return e == SamplingEnd::kMaxSeconds || e == SamplingEnd::kMaxReps;
  };
  return bound(job) ? job : block;
}

// Adds block `index`'s kept samples, medians and disturbance to the job's.
void AddBlock(int index, int blocks, const Interleaved& block, Measurement& job) {
  if (block.kept_reps == 0) return;
  for (size_t arm = 0; arm < block.samples.size(); ++arm) {
    for (size_t launch = 0; launch < block.samples[arm].size(); ++launch) {
      const std::vector<double>& samples = block.samples[arm][launch];
      std::vector<double>& all = job.samples[arm][launch];
      all.insert(all.end(), samples.begin(), samples.end());
      job.block_medians[arm][launch].push_back(Summarize(samples).median);
    }
  }
  job.ended_by = job.kept_reps == 0 ? block.ended_by : JobEnd(job.ended_by, block.ended_by);
  job.kept_reps += block.kept_reps;
  if (job.disturbance.empty() && !block.disturbance.empty()) {
    job.disturbance =
        blocks == 1 ? block.disturbance : absl::StrCat("block ", index, ", ", block.disturbance);
  }
}

// One block: its launches placed, then its interleaved reps.
absl::StatusOr<Interleaved> RunBlock(const MeasurementSpec& spec, int block,
                                     const PlaceLaunches& place, LaunchTimer& timer,
                                     Backend& device, BlockObserver& observer,
                                     const std::atomic<bool>& cancelled, Interleaved& partial) {
  ASSIGN_OR_RETURN(const std::vector<std::vector<DeviceLaunch*>> launches, place(block));
  if (launches.size() != spec.arms.size()) {
    return absl::InternalError(
        absl::StrFormat("block %d placed %d arms of %d", block, launches.size(), spec.arms.size()));
  }
  for (size_t arm = 0; arm < launches.size(); ++arm) {
    if (launches[arm].size() != spec.arms[arm].launches.size()) {
      return absl::InternalError(absl::StrFormat("block %d placed %d launches for arm %d of %d",
                                                 block, launches[arm].size(), arm,
                                                 spec.arms[arm].launches.size()));
    }
  }
  const TimeLaunchFn time = [&](int arm, int launch) {
    return timer.Time(*launches[arm][launch], spec.arms[arm].timing);
  };
  SamplingRule sampling = spec.sampling;
  sampling.max_seconds /= spec.blocks;
  const InterleavedSpec schedule{
      .arms = static_cast<int>(spec.arms.size()),
      .launches = static_cast<int>(spec.arms[0].launches.size()),
      .reps = spec.reps,
      .order = spec.order,
      .seed = block == 0 ? spec.seed : MixSeed(spec.seed, block, kBlockOrderStream),
      .require_clean = spec.require_clean,
      .sampling = sampling};
  observer.StartBlock(block);
  return RunInterleaved(schedule, time, device, observer, cancelled, &partial);
}

std::string Stem(const std::string& metric) {
  return absl::EndsWith(metric, "_us") ? metric.substr(0, metric.size() - 3) : metric;
}

}  // namespace

std::vector<v1::DerivedValue> DeclaredDerived(const LaunchDeclaration& launch, bool only_launch,
                                              double median_us, double calibrated_read_tbps) {
  const std::string prefix = only_launch ? "" : Stem(launch.metric) + "_";
  std::vector<v1::DerivedValue> derived;
  const int64_t bytes = launch.bytes_read + launch.bytes_written;
  if (bytes > 0) {
    const double tbps = Tbps(static_cast<double>(bytes), median_us);
    derived.push_back(Derived(prefix + "tbps", "TB/s", tbps));
    if (std::optional<double> pct = PercentOfRead(tbps, calibrated_read_tbps)) {
      derived.push_back(Derived(prefix + "pct_of_read", "%", *pct));
    }
  }
  if (launch.flops > 0.0 && median_us > 0.0) {
    derived.push_back(Derived(prefix + "tflops", "TFLOP/s", launch.flops / median_us / 1e6));
  }
  return derived;
}

absl::StatusOr<Measurement> TimeArms(const MeasurementSpec& spec, const PlaceLaunches& place,
                                     Backend& device, RepObserver& observer,
                                     const std::atomic<bool>& cancelled, Measurement* partial) {
  RETURN_IF_ERROR(CheckSpec(spec));
  Measurement job;
  job.samples.assign(spec.arms.size(),
                     std::vector<std::vector<double>>(spec.arms[0].launches.size()));
  job.block_medians = job.samples;
  LaunchTimer timer(device);
  BlockObserver blocks(observer, spec.blocks);
  for (int block = 0; block < spec.blocks; ++block) {
    Interleaved block_partial;
    absl::StatusOr<Interleaved> run =
        RunBlock(spec, block, place, timer, device, blocks, cancelled, block_partial);
    if (!run.ok()) {
      // The reps that completed before a cancel still count (with fewer kept reps).
      if (absl::IsCancelled(run.status())) AddBlock(block, spec.blocks, block_partial, job);
      if (partial != nullptr) *partial = std::move(job);
      return run.status();
    }
    AddBlock(block, spec.blocks, *run, job);
  }
  return job;
}

JobOutcome MeasureArms(const MeasurementSpec& spec, const PlaceLaunches& place, Backend& device,
                       const EventPublisher& publish, const std::atomic<bool>& cancelled,
                       const DeriveValues& derive) {
  PublishingObserver observer(publish);
  Measurement partial;
  absl::StatusOr<Measurement> timed = TimeArms(spec, place, device, observer, cancelled, &partial);
  JobOutcome outcome{.status = timed.status()};
  if (!timed.ok() && !(absl::IsCancelled(timed.status()) && partial.kept_reps > 0)) return outcome;
  const Measurement& measured = timed.ok() ? *timed : partial;
  const size_t launches = spec.arms[0].launches.size();
  const double calibrated = device.Details().calibrated_read_tbps;
  const std::string description = device.Description();
  std::vector<v1::Result> results(spec.arms.size());
  for (size_t i = 0; i < spec.arms.size(); ++i) {
    const ArmDeclaration& arm = spec.arms[i];
    v1::Result& r = results[i];
    r.set_arm_index(static_cast<uint32_t>(i));
    for (const v1::AxisValue& axis : arm.axes) *r.add_axes() = axis;
    for (size_t l = 0; l < launches; ++l) {
      *r.add_metrics() = MetricOf(arm.launches[l].metric, "us", measured.samples[i][l]);
    }
    for (size_t b = 0; b < measured.block_medians[i][0].size(); ++b) {
      double section = 0.0;
      for (size_t l = 0; l < launches; ++l) section += measured.block_medians[i][l][b];
      r.add_block_section_us(section);
    }
    for (size_t l = 0; l < launches; ++l) {
      for (v1::DerivedValue& d :
           DeclaredDerived(arm.launches[l], launches == 1, r.metrics(static_cast<int>(l)).median(),
                           calibrated)) {
        *r.add_derived() = std::move(d);
      }
    }
    r.set_disturbance(measured.disturbance);
    r.set_device(description);
    // A cancelled job's sampling did not end by its rule.
    if (timed.ok()) r.set_sampling_end(SamplingEndToProto(measured.ended_by));
  }
  if (derive) derive(measured, results);
  for (v1::Result& r : results) {
    v1::JobEvent event;
    *event.mutable_result() = std::move(r);
    publish(std::move(event));
    ++outcome.results;
  }
  return outcome;
}

}  // namespace gpuprobe
