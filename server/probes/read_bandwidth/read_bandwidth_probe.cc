#include "server/probes/read_bandwidth/read_bandwidth_probe.h"

#include <algorithm>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/param_spec.h"
#include "common/param_text.h"
#include "common/status_macros.h"
#include "kernels/read_buffer.h"
#include "server/measure/interleaved.h"
#include "server/probes/job_events.h"
#include "server/probes/measure_arms.h"
#include "server/probes/read_bandwidth/read_bandwidth.pb.h"
#include "server/probes/results.h"

namespace gpuprobe {
namespace {

// The sizes asked for and the default ladder together.
constexpr int kMaxSizes = 256;
constexpr int kMaxReps = 10000;  // as the reps field declares
constexpr double kMaxSeconds = 86400;
constexpr int64_t kMaxArmReps = 1'000'000;
// The default ladder: 1 MiB to 4 GiB in powers of two.
constexpr int kDefaultFirstLog2 = 20;
constexpr int kDefaultLastLog2 = 32;
// A launch's cost beyond its bytes, for the device-time estimate.
constexpr double kLaunchSeconds = 10e-6;

v1::ProbeInfo MakeInfo() {
  v1::ProbeInfo info;
  info.set_name("read-bandwidth");
  info.set_description(
      "streaming read of one device buffer per size, warm and cold: TB/s and the share of "
      "the calibrated read");
  info.set_params_type(v1::ReadBandwidthParams::descriptor()->full_name());
  info.set_has_check(true);
  for (v1::ProbeParam& p : DeclaredParams(*v1::ReadBandwidthParams::descriptor())) {
    *info.add_params() = std::move(p);
  }
  *info.add_axes() = Quantity("size_bytes", "bytes", "bytes read by one read");
  *info.add_axes() = Quantity("cache", "", "warm or cold (L2 flushed before each read)");
  *info.add_metrics() = Quantity("read_us", "us", "one streaming read of the buffer");
  *info.add_derived() = Quantity("tbps", "TB/s", "size_bytes / read_us");
  *info.add_derived() =
      Quantity("pct_of_read", "%", "tbps as a percentage of the device's calibrated read");
  return info;
}

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

// The params' sampling rule, checked (max_reps left unset).
absl::StatusOr<SamplingRule> SamplingRuleOf(const v1::ReadBandwidthParams& p) {
  return ResolveSamplingRule(
      p.has_precision() ? std::optional<double>(p.precision()) : std::nullopt,
      p.has_max_seconds() ? std::optional<double>(p.max_seconds()) : std::nullopt, kMaxSeconds);
}

// The params completed: every default filled in, every field checked, the default ladder
// merged into the sizes (sorted, without repeats).
absl::StatusOr<v1::ReadBandwidthParams> Complete(v1::ReadBandwidthParams p) {
  RETURN_IF_ERROR(CompleteParams(p));
  std::set<uint64_t> sizes(p.sizes_bytes().begin(), p.sizes_bytes().end());
  if (p.default_sizes()) {
    for (int log2 = kDefaultFirstLog2; log2 <= kDefaultLastLog2; ++log2) {
      sizes.insert(uint64_t{1} << log2);
    }
  }
  if (sizes.empty()) return Invalid("sizes_bytes: none, and default_sizes is false");
  if (static_cast<int>(sizes.size()) > kMaxSizes) {
    return Invalid(absl::StrFormat("sizes_bytes: %d sizes; at most %d", sizes.size(), kMaxSizes));
  }
  p.clear_sizes_bytes();
  for (const uint64_t bytes : sizes) p.add_sizes_bytes(bytes);
  p.set_default_sizes(false);
  std::vector<int> caches;
  for (const int c : p.caches()) {
    if (std::find(caches.begin(), caches.end(), c) == caches.end()) caches.push_back(c);
  }
  p.clear_caches();
  for (const int c : caches) p.add_caches(static_cast<v1::CacheMode>(c));
  ASSIGN_OR_RETURN(const SamplingRule rule, SamplingRuleOf(p));
  if (rule.precision > 0.0) p.set_max_seconds(rule.max_seconds);
  return p;
}

// The arms, in run order: sizes ascending, each in every cache state.
struct ReadArm {
  int64_t bytes = 0;
  v1::CacheMode cache = v1::CACHE_MODE_WARM;
};

std::vector<ReadArm> Arms(const v1::ReadBandwidthParams& p) {
  std::vector<ReadArm> arms;
  for (const uint64_t bytes : p.sizes_bytes()) {
    for (const int cache : p.caches()) {
      arms.push_back({static_cast<int64_t>(bytes), static_cast<v1::CacheMode>(cache)});
    }
  }
  return arms;
}

int64_t TotalBytes(const v1::ReadBandwidthParams& p) {
  int64_t total = 0;
  for (const uint64_t bytes : p.sizes_bytes()) total += static_cast<int64_t>(bytes);
  return total;
}

v1::PlannedArm Planned(const ReadArm& arm) {
  v1::PlannedArm planned;
  *planned.add_axes() = IntAxis("size_bytes", arm.bytes);
  *planned.add_axes() = TextAxis("cache", std::string(CacheName(CacheFromProto(arm.cache))));
  return planned;
}

// One read of each size, its checksum against the host's sum of the words it had to read.
JobOutcome Check(const v1::ReadBandwidthParams& p, const ReadBuffersFactory& make, Backend& device,
                 const EventPublisher& publish, const std::atomic<bool>& cancelled) {
  JobOutcome outcome;
  int failed = 0;
  for (const uint64_t size : p.sizes_bytes()) {
    if (cancelled.load()) {
      outcome.status = absl::CancelledError("cancelled between sizes");
      return outcome;
    }
    const int64_t bytes = static_cast<int64_t>(size);
    // One buffer at a time, freed after its read.
    absl::StatusOr<std::unique_ptr<ReadBuffers>> buffers = make(device);
    absl::StatusOr<int> buffer =
        buffers.ok() ? (*buffers)->Allocate(bytes, p.seed()) : buffers.status();
    absl::StatusOr<uint32_t> read = buffer.ok() ? (*buffers)->Checksum(*buffer) : buffer.status();
    if (!read.ok()) {
      outcome.status = read.status();
      return outcome;
    }
    const uint32_t want = ReadBufferChecksum(bytes / 4, p.seed());
    v1::JobEvent event;
    v1::KernelCheck* c = event.mutable_check();
    c->set_kernel("read");
    *c->add_axes() = IntAxis("size_bytes", bytes);
    c->set_passed(*read == want);
    c->set_detail(absl::StrFormat("checksum 0x%08x, expected 0x%08x", *read, want));
    failed += c->passed() ? 0 : 1;
    publish(std::move(event));
    ++outcome.results;
  }
  if (failed > 0) {
    outcome.status = absl::DataLossError(absl::StrFormat(
        "%d of %d reads returned another checksum than the buffer's", failed, outcome.results));
  }
  return outcome;
}

}  // namespace

ReadBandwidthProbe::ReadBandwidthProbe(ReadBuffersFactory buffers)
    : info_(MakeInfo()), buffers_(std::move(buffers)) {}

absl::StatusOr<ProbeSpec> ReadBandwidthProbe::Resolve(const v1::ProbeRequest& request) const {
  v1::ReadBandwidthParams params;
  RETURN_IF_ERROR(UnpackParams(request, params));
  ASSIGN_OR_RETURN(const v1::ReadBandwidthParams complete, Complete(std::move(params)));
  const int64_t arms = static_cast<int64_t>(Arms(complete).size());
  if (arms * complete.reps() > kMaxArmReps) {
    return Invalid(absl::StrFormat("reps: %d arms x %d reps is more than %d launches", arms,
                                   complete.reps(), kMaxArmReps));
  }
  return std::make_shared<const v1::ReadBandwidthParams>(complete);
}

absl::StatusOr<ProbePlan> ReadBandwidthProbe::Plan(const google::protobuf::Message& spec,
                                                   bool check, const Backend& device) const {
  ASSIGN_OR_RETURN(const v1::ReadBandwidthParams* params, SpecAs<v1::ReadBandwidthParams>(spec));
  const v1::ReadBandwidthParams& p = *params;
  // A check allocates one buffer at a time, a timed job every size at once (its arms interleave).
  int64_t need = 0;
  for (const uint64_t bytes : p.sizes_bytes()) {
    need = check ? std::max(need, static_cast<int64_t>(bytes)) : need + static_cast<int64_t>(bytes);
  }
  if (need > device.MemoryCapacityBytes()) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "sizes_bytes: the buffers take %.2f GiB, more than the %.2f GiB the %s device offers",
        static_cast<double>(need) / (1 << 30),
        static_cast<double>(device.MemoryCapacityBytes()) / (1 << 30), device.Name()));
  }
  const double tbps = device.Details().calibrated_read_tbps;
  const double bytes_per_s = tbps > 0.0 ? tbps * 1e12 : 1e9;
  if (check) {
    // The host sums every word it expects, at about 1 GB/s.
    return ProbePlan{.device_seconds =
                         static_cast<double>(TotalBytes(p)) * (1 / bytes_per_s + 1e-9)};
  }
  const int launches = p.timing() == v1::TIMING_MODE_GRAPH ? kGraphLaunchesPerSample : 1;
  const double flush_bytes = 2.0 * static_cast<double>(device.Details().l2_bytes);
  double seconds = 0.0;
  for (const ReadArm& arm : Arms(p)) {
    const double read =
        static_cast<double>(arm.bytes) + (arm.cache == v1::CACHE_MODE_COLD ? flush_bytes : 0.0);
    seconds += kLaunchSeconds + read / bytes_per_s;
  }
  seconds *= launches;  // one rep of every arm
  // Sampling until precise stops after the rep that passes max_seconds.
  return ProbePlan{.device_seconds = p.has_precision()
                                         ? std::max(seconds * p.reps(), p.max_seconds() + seconds)
                                         : seconds * p.reps()};
}

JobOutcome ReadBandwidthProbe::Run(const ProbeRun& run, Backend& device,
                                   const EventPublisher& publish,
                                   const std::atomic<bool>& cancelled) const {
  absl::StatusOr<const v1::ReadBandwidthParams*> params =
      SpecAs<v1::ReadBandwidthParams>(*run.spec);
  if (!params.ok()) return JobOutcome{.status = params.status()};
  const v1::ReadBandwidthParams& p = **params;
  const std::vector<ReadArm> arms = Arms(p);
  v1::JobEvent started = StartedEvent(Name(), device.Description(), p);
  for (const ReadArm& arm : arms) *started.mutable_started()->add_arms() = Planned(arm);
  publish(std::move(started));
  if (run.check) return Check(p, buffers_, device, publish, cancelled);

  absl::StatusOr<std::unique_ptr<ReadBuffers>> reads = buffers_(device);
  if (!reads.ok()) return JobOutcome{.status = reads.status()};
  std::vector<std::vector<DeviceLaunch*>> launches;  // by arm, in Arms order
  const TimingMode timing = TimingFromProto(p.timing());
  MeasurementSpec spec{.reps = static_cast<int>(p.reps()),
                       .order = OrderFromProto(p.order()),
                       .seed = p.seed(),
                       .require_clean = p.require_clean()};
  for (const uint64_t bytes : p.sizes_bytes()) {
    absl::StatusOr<int> buffer = (*reads)->Allocate(static_cast<int64_t>(bytes), p.seed());
    if (!buffer.ok()) return JobOutcome{.status = buffer.status()};
    for (const int cache : p.caches()) {
      const ReadArm arm{static_cast<int64_t>(bytes), static_cast<v1::CacheMode>(cache)};
      const v1::PlannedArm planned = Planned(arm);
      spec.arms.push_back({.axes = {planned.axes().begin(), planned.axes().end()},
                           .timing = {.timing = timing,
                                      .cache = CacheFromProto(arm.cache),
                                      .graph_launches = kGraphLaunchesPerSample},
                           .launches = {{.metric = "read_us", .bytes_read = arm.bytes}}});
      launches.push_back({&(*reads)->Read(*buffer)});
    }
  }
  absl::StatusOr<SamplingRule> sampling = SamplingRuleOf(p);
  if (!sampling.ok()) return JobOutcome{.status = sampling.status()};
  spec.sampling = *sampling;
  spec.sampling.max_reps = static_cast<int>(
      std::max<int64_t>(p.reps(), std::min<int64_t>(kMaxReps, kMaxArmReps / arms.size())));
  return MeasureArms(
      spec, [&](int) { return launches; }, device, publish, cancelled);
}

}  // namespace gpuprobe
