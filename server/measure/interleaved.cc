#include "server/measure/interleaved.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace gpuprobe {

absl::StatusOr<Interleaved> RunInterleaved(const InterleavedSpec& spec, const TimeLaunchFn& time,
                                           Backend& device, RepObserver& observer,
                                           const std::atomic<bool>& cancelled,
                                           Interleaved* partial) {
  Interleaved run;
  run.samples.assign(spec.arms, std::vector<std::vector<double>>(spec.launches));
  for (int rep = 0; rep < spec.reps; ++rep) {
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
                            rep, spec.reps, std::max(0, rep - 1)));
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
    observer.OnRepDone(rep + 1, spec.reps);
  }
  run.kept_reps = std::max(0, spec.reps - 1);
  return run;
}

}  // namespace gpuprobe
