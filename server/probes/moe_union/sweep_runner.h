// The moe-union probe's engine: runs a validated sweep on a backend through the measuring helper
// every probe shares (server/probes/measure_arms.h: rep r runs every arm once before rep r+1
// starts, rep 0 a warmed throwaway for every arm, blocks on banks placed anew), gate+up and down
// launches timed separately, one Result per arm.
//
//   JobOutcome outcome = RunSweep(spec, backend, publish, cancelled);
#pragma once

#include <atomic>
#include <vector>

#include "absl/status/statusor.h"
#include "server/device/backend.h"
#include "server/measure/interleaved.h"
#include "server/probes/moe_union/arm_results.h"
#include "server/probes/moe_union/moe_arms.h"
#include "server/probes/moe_union/sweep_spec.h"

namespace gpuprobe {

// An arm's routing (exact union, seeded by (seed, t, union)), activations x and down inputs h,
// all drawn fresh from the spec's seed.
absl::StatusOr<ArmInputs> MakeArmInputs(const SweepSpec& spec, const Arm& arm);

// Refuses, before any allocation, a sweep the backend cannot run: a variant it lacks
// (UNIMPLEMENTED) or more memory than it has (RESOURCE_EXHAUSTED, with both figures).
absl::Status CheckFitsBackend(const SweepSpec& spec, const Backend& backend);

// Device time the job will take, roughly: every launch's bytes at the device's calibrated read
// bandwidth (1 GB/s for a backend without one: the cpu reference kernels are slower still),
// plus 10 us of launch overhead, over all reps (and graph launches). For queue admission only.
double EstimateDeviceSeconds(const SweepSpec& spec, const Backend& backend);

// Runs the sweep: `arms` (the probe's device code on `backend`) launches, `backend` times, and
// `publish` hears progress, telemetry and one Result per arm (axes variant, t, slots, union;
// metrics gu_us and down_us; the derived values of arm_results.h). Once `cancelled` is true it
// stops between launches, publishes results built from the reps that completed (if any kept rep
// did), and ends CANCELLED.
JobOutcome RunSweep(const SweepSpec& spec, Backend& backend, MoeArms& arms,
                    const EventPublisher& publish, const std::atomic<bool>& cancelled);
// The same with the device's own MoeArmsOn(backend).
JobOutcome RunSweep(const SweepSpec& spec, Backend& backend, const EventPublisher& publish,
                    const std::atomic<bool>& cancelled);

}  // namespace gpuprobe
