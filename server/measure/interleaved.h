// The interleaved arm scheduler every timed probe runs on (the seed's method): rep r times every
// arm once, in the rep's arm order, before rep r + 1 starts; rep 0 is a warmed throwaway for
// every arm; a telemetry reading after each rep flags (or, with require_clean, fails) a
// disturbed measurement. The probe names what a launch of an arm is; the device times it.
//
//   ASSIGN_OR_RETURN(Interleaved run, RunInterleaved(
//       {.arms = n, .launches = 2, .reps = 20}, time_launch, device, observer, cancelled));
//   // run.samples[arm][launch] holds the kept reps' samples in rep order.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/device/backend.h"
#include "server/measure/arm_order.h"

namespace gpuprobe {

// Graph mode: launches behind one sample.
inline constexpr int kGraphLaunchesPerSample = 10;

// Sampling until precise enough (precision > 0): `reps` is then the least number of reps, and
// more follow, one rep of every arm at a time, until each launch of each arm has a median
// whose 95% interval's half-width (RelativeMedianHalfWidth) is under `precision`, or until
// `max_seconds` have passed since rep 0 began, or `max_reps`.
struct SamplingRule {
  double precision = 0.0;  // a fraction of the median; 0: exactly `reps`
  double max_seconds = 0.0;
  int max_reps = 0;
};

// A request's sampling rule, as every probe takes it: precision in [kFinestPrecision,
// kCoarsestPrecision] (a fraction of the median); max_seconds only with a precision, in
// (0, max_seconds_limit], default kDefaultMaxSeconds; neither: exactly the reps. max_reps is
// left for the probe to bound. INVALID_ARGUMENT names the field, the value and the limit.
inline constexpr double kFinestPrecision = 0.0001;
inline constexpr double kCoarsestPrecision = 0.5;
inline constexpr double kDefaultMaxSeconds = 60;
absl::StatusOr<SamplingRule> ResolveSamplingRule(std::optional<double> precision,
                                                 std::optional<double> max_seconds,
                                                 double max_seconds_limit);

// What ended a job's sampling.
enum class SamplingEnd { kReps, kPrecision, kMaxSeconds, kMaxReps };

struct InterleavedSpec {
  int arms = 0;
  int launches = 1;  // timed launches per arm and rep (moe-union: gate+up, then down)
  int reps = 0;      // including rep 0, which is dropped
  ArmOrder order = ArmOrder::kFixed;
  uint64_t seed = 0;  // of the shuffled order
  bool require_clean = false;
  SamplingRule sampling;
};

struct Interleaved {
  // [arm][launch]: the kept reps' samples, in rep order.
  std::vector<std::vector<std::vector<double>>> samples;
  int kept_reps = 0;
  SamplingEnd ended_by = SamplingEnd::kReps;
  // What the first disturbed reading said ("rep 3: ..."); empty when none was.
  std::string disturbance;
};

// Called on the scheduler's thread after each rep.
class RepObserver {
 public:
  virtual ~RepObserver() = default;
  // `reps_total` is the most reps the job may take: sampling until precise, the rule's bound.
  virtual void OnRepDone(int reps_done, int reps_total) = 0;
  virtual void OnTelemetry(const TelemetrySample&) {}
};

// One sample of launch `launch` of arm `arm`, microseconds.
using TimeLaunchFn = std::function<absl::StatusOr<double>(int arm, int launch)>;

// Runs every rep, or stops between launches once `cancelled`: then CANCELLED, with `partial`
// (if not null) holding the samples of the reps that completed (kept_reps may be 0).
// FAILED_PRECONDITION when require_clean and a reading was disturbed; a timing error as it came.
absl::StatusOr<Interleaved> RunInterleaved(const InterleavedSpec& spec, const TimeLaunchFn& time,
                                           Backend& device, RepObserver& observer,
                                           const std::atomic<bool>& cancelled,
                                           Interleaved* partial = nullptr);

}  // namespace gpuprobe
