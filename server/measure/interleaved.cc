#include "server/measure/interleaved.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "server/measure/statistics.h"

namespace gpuprobe {
namespace {

// Whether every launch of every arm is within the rule's precision.
bool PreciseEnough(const Interleaved& run, double precision) {
  std::vector<double> scratch;
  for (const auto& launches : run.samples) {
    for (const std::vector<double>& samples : launches) {
      scratch = samples;
      if (!(RelativeMedianHalfWidth(scratch) < precision)) return false;
    }
  }
  return true;
}

// What ends the sampling after `reps` reps (rep 0 included), or nothing.
std::optional<SamplingEnd> SamplingEnds(const InterleavedSpec& spec, const Interleaved& run,
                                        int reps, double seconds) {
  const SamplingRule& rule = spec.sampling;
  if (reps < spec.reps) return std::nullopt;
  if (rule.precision <= 0.0) return SamplingEnd::kReps;
  if (PreciseEnough(run, rule.precision)) return SamplingEnd::kPrecision;
  if (seconds >= rule.max_seconds) return SamplingEnd::kMaxSeconds;
  if (reps >= rule.max_reps) return SamplingEnd::kMaxReps;
  return std::nullopt;
}

}  // namespace

absl::StatusOr<SamplingRule> ResolveSamplingRule(std::optional<double> precision,
                                                 std::optional<double> max_seconds,
                                                 double max_seconds_limit) {
  if (!precision) {
    if (max_seconds) {
      return absl::InvalidArgumentError(
          "max_seconds: bounds sampling until precise; give precision too");
    }
    return SamplingRule{};
  }
  if (!(*precision >= kFinestPrecision && *precision <= kCoarsestPrecision)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("precision: %g is outside [%g, %g] (a fraction of the median)", *precision,
                        kFinestPrecision, kCoarsestPrecision));
  }
  SamplingRule rule{.precision = *precision,
                    .max_seconds = max_seconds.value_or(kDefaultMaxSeconds)};
  if (!(rule.max_seconds > 0.0 && rule.max_seconds <= max_seconds_limit)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("max_seconds: %g is outside (0, %g]", rule.max_seconds, max_seconds_limit));
  }
  return rule;
}

absl::StatusOr<Interleaved> RunInterleaved(const InterleavedSpec& spec, const TimeLaunchFn& time,
                                           Backend& device, RepObserver& observer,
                                           const std::atomic<bool>& cancelled,
                                           Interleaved* partial) {
  Interleaved run;
  run.samples.assign(spec.arms, std::vector<std::vector<double>>(spec.launches));
  const bool until_precise = spec.sampling.precision > 0.0;
  const int most_reps = until_precise ? std::max(spec.reps, spec.sampling.max_reps) : spec.reps;
  const auto start = std::chrono::steady_clock::now();
  for (int rep = 0; rep < most_reps; ++rep) {
    for (const int arm : ArmOrderOfRep(spec.order, spec.arms, rep, spec.seed)) {
      if (cancelled.load()) {
        // The reps that completed are kept; the partial one is dropped, so that every arm
        // covers the same reps.
        run.kept_reps = std::max(0, rep - 1);
        for (auto& launches : run.samples) {
          for (auto& samples : launches) samples.resize(run.kept_reps);
        }
        if (partial != nullptr) *partial = std::move(run);
        return absl::CancelledError(
            absl::StrFormat("cancelled during rep %d of %d; results of the %d completed reps kept",
                            rep, most_reps, std::max(0, rep - 1)));
      }
      for (int launch = 0; launch < spec.launches; ++launch) {
        ASSIGN_OR_RETURN(const double us, time(arm, launch));
        if (rep > 0) run.samples[arm][launch].push_back(us);  // rep 0: the warmed throwaway
      }
    }
    if (std::optional<TelemetrySample> reading = device.SampleTelemetry()) {
      observer.OnTelemetry(*reading);
      if (run.disturbance.empty() && Disturbed(*reading)) {
        run.disturbance = absl::StrFormat("rep %d: %s", rep, Disturbance(*reading));
        if (spec.require_clean) {
          return absl::FailedPreconditionError(
              absl::StrCat("require_clean: the device was not clean during ", run.disturbance));
        }
      }
    }
    observer.OnRepDone(rep + 1, most_reps);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (std::optional<SamplingEnd> end = SamplingEnds(spec, run, rep + 1, seconds)) {
      run.ended_by = *end;
      run.kept_reps = rep;
      return run;
    }
  }
  run.kept_reps = std::max(0, most_reps - 1);  // reached only without reps
  return run;
}

}  // namespace gpuprobe
