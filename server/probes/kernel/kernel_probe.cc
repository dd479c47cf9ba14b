#include "server/probes/kernel/kernel_probe.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/param_spec.h"
#include "common/param_text.h"
#include "common/status_macros.h"
#include "server/measure/interleaved.h"
#include "server/measure/launch_timer.h"
#include "server/probes/job_events.h"
#include "server/probes/kernel/kernel_params.h"
#include "server/probes/kernel/kernel_results.h"
#include "server/probes/kernel/output_comparison.h"
#include "server/probes/measure_arms.h"
#include "server/probes/results.h"

namespace gpuprobe {
namespace {

constexpr double kMaxSeconds = 86400;  // as max_seconds declares
constexpr int kMaxReps = 10000;        // as reps declares
// Before its first rep a job loads its modules (the driver compiles PTX) and fills its buffers:
// this long, plus the buffers' bytes at kFillBytesPerSecond, without an event is not a hang.
constexpr double kSetupSeconds = 10;
constexpr double kFillBytesPerSecond = 10e9;

v1::ProbeInfo MakeInfo() {
  v1::ProbeInfo info;
  info.set_name("kernel");
  info.set_description(
      "a client's own compiled CUDA kernels (uploaded cubin, fatbin or PTX), timed arm against "
      "arm under the daemon's harness on buffers it fills");
  info.set_params_type(v1::KernelParams::descriptor()->full_name());
  info.set_has_check(true);
  info.set_client_code(true);
  for (v1::ProbeParam& p : DeclaredParams(*v1::KernelParams::descriptor())) {
    *info.add_params() = std::move(p);
  }
  *info.add_axes() = Quantity("arm", "", "the arm's name");
  *info.add_axes() = Quantity("code_sha256", "",
                              "sha256 of the machine code the arm ran (of its launches' hashes "
                              "where it has several): equal values run identical code");
  *info.add_metrics() = Quantity("time_us", "us", "one run of the arm's launches");
  *info.add_derived() = Quantity("tbps", "TB/s", "(bytes_read + bytes_written) / time_us");
  *info.add_derived() =
      Quantity("pct_of_read", "%", "tbps as a percentage of the device's calibrated read");
  *info.add_derived() = Quantity("tflops", "TFLOP/s", "flops / time_us");
  *info.add_derived() = Quantity("vs_baseline", "",
                                 "time_us / the baseline arm's (above 1 is slower), for an arm "
                                 "with a baseline; its verdict at threshold");
  *info.add_derived() = Quantity("vs_baseline_low", "", "its 95% interval: lower bound");
  *info.add_derived() = Quantity("vs_baseline_high", "", "its upper bound");
  return info;
}

absl::StatusOr<SamplingRule> SamplingRuleOf(const v1::KernelParams& p) {
  return ResolveSamplingRule(
      p.has_precision() ? std::optional<double>(p.precision()) : std::nullopt,
      p.has_max_seconds() ? std::optional<double>(p.max_seconds()) : std::nullopt, kMaxSeconds);
}

// Warm graph samples of graph_launches 0 take about this long, at most kMaxAutoGraphLaunches
// runs: a sample's timed region also holds a fixed cost besides its runs (about 3 us on an H200),
// which this many runs share. 10-run samples of a 4.4 us kernel read 6.8% over
// do_bench_cudagraph at its default rep on an H200, 100-run ones within 1% of it
// (docs/kernel-decisions.md rows 169 and 170).
constexpr double kAutoSampleUs = 500;
constexpr int kMaxAutoGraphLaunches = 1000;
// The graph samples that estimate an arm's time before its reps; the least of them counts.
constexpr int kEstimateSamples = 3;

// The least multiple of the rotations' period from `launches` up, so that each replay starts on
// a copy that the previous one did not end on.
int OnRotationPeriod(const v1::KernelParams& p, int launches) {
  const int every = RotationPeriod(p);
  return every * ((launches + every - 1) / every);
}

// Launches per graph sample as planned: graph_launches where set, else 10 on the rotations'
// period (the count that sizes a warm sample is at most this long: see AutoGraphLaunches).
int GraphLaunches(const v1::KernelParams& p) {
  return p.graph_launches() > 0 ? static_cast<int>(p.graph_launches())
                                : OnRotationPeriod(p, kGraphLaunchesPerSample);
}

// Whether the arms' samples are sized from their times: warm graph timing, graph_launches 0.
bool AutoSampled(const v1::KernelParams& p) {
  return p.timing() == v1::TIMING_MODE_GRAPH && p.cache() == v1::CACHE_MODE_WARM &&
         p.graph_launches() == 0;
}

// The launches of a sample of about kAutoSampleUs for an arm of `run_us` a run (which a sample
// of GraphLaunches(p) runs measured), from 10 to kMaxAutoGraphLaunches, on the rotations'
// period. While every run takes what the estimate said, a sample so sized stays within the bound
// planned for GraphLaunches(p) runs: more than 10 runs are taken only of runs under 50 us, so a
// sample takes at most 0.5 ms and 64 (the longest period) such runs, under 10 runs of the
// shortest max_launch_seconds (1 ms).
int AutoGraphLaunches(const v1::KernelParams& p, double run_us) {
  const double wanted = run_us > 0 ? std::ceil(kAutoSampleUs / run_us) : kMaxAutoGraphLaunches;
  return OnRotationPeriod(p, static_cast<int>(std::clamp<double>(wanted, kGraphLaunchesPerSample,
                                                                 kMaxAutoGraphLaunches)));
}

TimingOptions TimingOf(const v1::KernelParams& p) {
  return {.timing = TimingFromProto(p.timing()),
          .cache = CacheFromProto(p.cache()),
          .graph_launches = GraphLaunches(p)};
}

// Each arm's timing: TimingOf(p), with a sample's launches sized from the arm's time where
// AutoSampled(p), the least of kEstimateSamples samples of GraphLaunches(p) runs on buffers
// placed for it; one sample where that already says 10 runs fill kAutoSampleUs (so that a long
// kernel's estimate costs one rep, within the worker's silence bound).
absl::StatusOr<std::vector<TimingOptions>> ArmTimings(const v1::KernelParams& p,
                                                      KernelRunner& runner, Backend& device) {
  std::vector<TimingOptions> timings(p.arms_size(), TimingOf(p));
  if (!AutoSampled(p)) return timings;
  RETURN_IF_ERROR(runner.Place());
  LaunchTimer timer(device);
  for (int arm = 0; arm < p.arms_size(); ++arm) {
    double least = std::numeric_limits<double>::infinity();
    for (int i = 0;
         i < kEstimateSamples && (i == 0 || AutoGraphLaunches(p, least) > GraphLaunches(p)); ++i) {
      ASSIGN_OR_RETURN(const double us, timer.Time(runner.Arm(arm), TimingOf(p)));
      least = std::min(least, us);
    }
    timings[arm].graph_launches = AutoGraphLaunches(p, least);
  }
  return timings;
}

int ArmIndex(const v1::KernelParams& p, const std::string& name) {
  for (int i = 0; i < p.arms_size(); ++i) {
    if (p.arms(i).name() == name) return i;
  }
  return 0;
}

const v1::KernelBuffer& BufferNamed(const v1::KernelParams& p, const std::string& name) {
  for (const v1::KernelBuffer& b : p.buffers()) {
    if (b.name() == name) return b;
  }
  return p.buffers(0);  // resolution made every output a buffer's name
}

std::vector<v1::AxisValue> ArmAxes(const v1::KernelParams& p, const KernelRunner& runner, int arm) {
  std::vector<std::string> code;
  for (int l = 0; l < p.arms(arm).launches_size(); ++l) {
    code.push_back(runner.CodeSha256(arm, l));
  }
  return {TextAxis("arm", p.arms(arm).name()), TextAxis("code_sha256", ArmCodeSha256(code))};
}

// The check: every arm run once on freshly filled buffers with its outputs poisoned, the
// reference arm first; each other arm's outputs compared with the reference's. One KernelCheck
// per output compared.
JobOutcome Check(const v1::KernelParams& p, KernelRunner& runner, const EventPublisher& publish,
                 const std::atomic<bool>& cancelled) {
  const int reference = ArmIndex(p, p.reference());
  std::vector<int> order = {reference};
  for (int i = 0; i < p.arms_size(); ++i) {
    if (i != reference) order.push_back(i);
  }
  std::map<std::string, std::string> expected;  // the reference arm's outputs
  JobOutcome outcome;
  int failed = 0;
  for (const int arm : order) {
    if (cancelled.load())
      return JobOutcome{.status = absl::CancelledError("cancelled between arms")};
    const v1::KernelArm& a = p.arms(arm);
    absl::Status ran = runner.Place();
    for (const std::string& output : a.outputs()) {
      if (ran.ok()) ran = runner.Poison(output);
    }
    if (ran.ok()) ran = runner.RunOnce(arm);
    if (!ran.ok()) return JobOutcome{.status = ran};
    for (const std::string& output : a.outputs()) {
      absl::StatusOr<std::string> bytes = runner.Read(output);
      if (!bytes.ok()) return JobOutcome{.status = bytes.status()};
      if (arm == reference) {
        expected[output] = *std::move(bytes);
        continue;
      }
      const OutputComparison c =
          CompareOutput(BufferNamed(p, output).dtype(), p.tolerance(), expected[output], *bytes);
      v1::JobEvent event;
      v1::KernelCheck* check = event.mutable_check();
      check->set_kernel(a.name());
      *check->add_axes() = TextAxis("arm", a.name());
      *check->add_axes() = TextAxis("output", output);
      check->set_passed(c.passed);
      check->set_detail(absl::StrCat(output, " against ", p.reference(), "'s: ", c.detail));
      check->set_seed(p.seed());
      failed += c.passed ? 0 : 1;
      publish(std::move(event));
      ++outcome.results;
    }
  }
  if (failed > 0) {
    outcome.status = absl::DataLossError(
        absl::StrFormat("%d of %d outputs differ from the reference arm %s's beyond the tolerance",
                        failed, outcome.results, p.reference()));
  }
  return outcome;
}

}  // namespace

KernelProbe::KernelProbe(KernelRunnerFactory runners)
    : info_(MakeInfo()), runners_(std::move(runners)) {}

absl::StatusOr<ProbeSpec> KernelProbe::Resolve(const v1::ProbeRequest& request) const {
  v1::KernelParams params;
  RETURN_IF_ERROR(UnpackParams(request, params));
  ASSIGN_OR_RETURN(v1::KernelParams resolved, ResolveKernelParams(std::move(params)));
  ASSIGN_OR_RETURN(const SamplingRule rule, SamplingRuleOf(resolved));
  if (rule.precision > 0.0) resolved.set_max_seconds(rule.max_seconds);
  return std::make_shared<const v1::KernelParams>(std::move(resolved));
}

std::vector<std::string> KernelProbe::Modules(const google::protobuf::Message& spec) const {
  absl::StatusOr<const v1::KernelParams*> p = SpecAs<v1::KernelParams>(spec);
  return p.ok() ? ModuleIds(**p) : std::vector<std::string>{};
}

absl::StatusOr<ProbePlan> KernelProbe::Plan(const google::protobuf::Message& spec, bool check,
                                            const Backend& device) const {
  ASSIGN_OR_RETURN(const v1::KernelParams* params, SpecAs<v1::KernelParams>(spec));
  const v1::KernelParams& p = *params;
  if (device.Name() != "cuda") {
    return absl::FailedPreconditionError(absl::StrFormat(
        "probe: the kernel probe needs a cuda device; this gpuprobed's device is %s",
        device.Name()));
  }
  const int64_t bytes = BufferBytes(p);
  if (bytes > device.MemoryCapacityBytes()) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "buffers: the buffers and their copies take %.2f GiB, more than the %.2f GiB the %s "
        "device offers",
        static_cast<double>(bytes) / (1 << 30),
        static_cast<double>(device.MemoryCapacityBytes()) / (1 << 30), device.Name()));
  }
  // A client's kernel declares no time: the job's device time is bounded by every launch at
  // max_launch_seconds (its worker is killed past that), and admission holds the bound to
  // --max-job-seconds. With a precision, the sampling stops at max_seconds.
  const DeviceDetails details = device.Details();
  const double flush_seconds =
      p.cache() == v1::CACHE_MODE_COLD && details.calibrated_read_tbps > 0
          ? 2.0 * static_cast<double>(details.l2_bytes) / (details.calibrated_read_tbps * 1e12)
          : 0.0;
  const int per_sample = p.timing() == v1::TIMING_MODE_GRAPH ? GraphLaunches(p) : 1;
  double launches = 0;  // one run of every arm
  for (const v1::KernelArm& arm : p.arms()) launches += arm.launches_size();
  const double placement = static_cast<double>(BufferBytes(p)) / kFillBytesPerSecond;
  const double rep =
      per_sample * (launches * p.max_launch_seconds() + p.arms_size() * flush_seconds);
  const double checked =
      (check || p.verify()) ? p.arms_size() * placement + launches * p.max_launch_seconds() : 0.0;
  const double estimated = AutoSampled(p) ? placement + kEstimateSamples * rep : 0.0;
  ProbePlan plan{.silence_seconds = kSetupSeconds + placement + rep};
  if (check) {
    plan.device_seconds = checked;
    return plan;
  }
  plan.device_seconds =
      checked + estimated +
      (p.has_precision() ? p.max_seconds() + rep : p.blocks() * (placement + rep * p.reps()));
  return plan;
}

JobOutcome KernelProbe::Run(const ProbeRun& run, Backend& device, const EventPublisher& publish,
                            const std::atomic<bool>& cancelled) const {
  absl::StatusOr<const v1::KernelParams*> params = SpecAs<v1::KernelParams>(*run.spec);
  if (!params.ok()) return JobOutcome{.status = params.status()};
  const v1::KernelParams& p = **params;
  absl::StatusOr<std::unique_ptr<KernelRunner>> made = runners_(device);
  if (!made.ok()) return JobOutcome{.status = made.status()};
  KernelRunner& runner = **made;
  if (absl::Status loaded = runner.Load(p, run.modules); !loaded.ok()) {
    return JobOutcome{.status = loaded};
  }
  v1::JobEvent started = StartedEvent(Name(), device.Description(), p);
  std::vector<std::vector<v1::AxisValue>> axes;
  for (int arm = 0; arm < p.arms_size(); ++arm) {
    axes.push_back(ArmAxes(p, runner, arm));
    *started.mutable_started()->add_arms()->mutable_axes() = {axes.back().begin(),
                                                              axes.back().end()};
  }
  publish(std::move(started));
  if (run.check) return Check(p, runner, publish, cancelled);
  if (p.verify()) {
    JobOutcome verified = Check(p, runner, publish, cancelled);
    if (!verified.status.ok()) {
      verified.status = absl::Status(
          verified.status.code(),
          absl::StrCat("verify: ", verified.status.message(), "; the arms were not timed"));
      return verified;
    }
  }
  absl::StatusOr<std::vector<TimingOptions>> timings = ArmTimings(p, runner, device);
  if (!timings.ok()) return JobOutcome{.status = timings.status()};
  MeasurementSpec spec{.reps = static_cast<int>(p.reps()),
                       .order = OrderFromProto(p.order()),
                       .seed = p.seed(),
                       .require_clean = p.require_clean(),
                       .blocks = static_cast<int>(p.blocks())};
  for (int arm = 0; arm < p.arms_size(); ++arm) {
    const v1::KernelArm& a = p.arms(arm);
    spec.arms.push_back({.axes = axes[arm],
                         .timing = (*timings)[arm],
                         .launches = {{.metric = "time_us",
                                       .bytes_read = static_cast<int64_t>(a.bytes_read()),
                                       .bytes_written = static_cast<int64_t>(a.bytes_written()),
                                       .flops = a.flops()}}});
  }
  absl::StatusOr<SamplingRule> sampling = SamplingRuleOf(p);
  if (!sampling.ok()) return JobOutcome{.status = sampling.status()};
  spec.sampling = *sampling;
  spec.sampling.max_reps = static_cast<int>(std::max<int64_t>(
      p.reps(), std::min<int64_t>(kMaxReps, KernelLimits{}.max_arm_reps / p.arms_size())));
  const DeviceDetails details = device.Details();
  const CacheMode cache = CacheFromProto(p.cache());
  auto place = [&](int) -> absl::StatusOr<std::vector<std::vector<DeviceLaunch*>>> {
    RETURN_IF_ERROR(runner.Place());
    std::vector<std::vector<DeviceLaunch*>> launches;
    for (int arm = 0; arm < p.arms_size(); ++arm) launches.push_back({&runner.Arm(arm)});
    return launches;
  };
  auto derive = [&](const Measurement& measured, std::vector<v1::Result>& results) {
    AddBaselineVerdicts(p, measured, results);
    for (int arm = 0; arm < p.arms_size() && arm < static_cast<int>(results.size()); ++arm) {
      results[arm].set_impossible(ImpossibleTime(results[arm].metrics(0).median(),
                                                 static_cast<int64_t>(p.arms(arm).bytes_read()),
                                                 cache, details));
    }
    UniformDerived(info_.derived(), results);
  };
  return MeasureArms(spec, place, device, publish, cancelled, derive);
}

}  // namespace gpuprobe
