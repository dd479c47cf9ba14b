// The exactness job: every arm of a spec runs each kernel once, untimed, on the backend, with
// its output poisoned first, and is compared with the float64 reference on the same fresh
// random banks, activations and routing. The floor, which computes nothing, is checked by its
// sum of the words it read against the host's sum of the bytes it had to read.
//
//   ASSIGN_OR_RETURN(std::vector<KernelCheckResult> checks,
//                    RunExactnessCheck(spec, artifact_dir, backend, observer, cancelled));
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/device/backend.h"
#include "server/probes/moe_union/moe_arms.h"
#include "server/probes/moe_union/sweep_spec.h"

namespace gpuprobe {

// A kernel passes when every output element was written and
//   max_i |out_i - ref_i| / max(|ref_i|, kRelErrorFloor * max|ref|)  <= kExactnessTolerance
//   ||out - ref||_2 / ||ref||_2                                      <= kNormTolerance
// The cuda kernels multiply exact f16 weights by inputs split into f16 hi + lo parts (about
// 2^-22 of each input lost) and accumulate in f32 on the tensor cores, so their error is f32
// summation error: on the H200 about 1e-7 in norm and 1e-4 element-wise (docs/PERF.md). A
// wrong nibble, scale block, row or slot lands orders of magnitude above both bars, and so
// does dropping the inputs' lo parts (about 2e-4 in norm).
inline constexpr double kExactnessTolerance = 1e-3;
inline constexpr double kNormTolerance = 1e-5;
// Elements below this share of the largest reference element are judged against that share
// instead of themselves: cancellation leaves them no meaningful relative error of their own.
inline constexpr double kRelErrorFloor = 1e-2;

struct ErrorStats {
  double max_rel = 0.0;
  double mean_rel = 0.0;
  double norm_rel = 0.0;  // ||out - ref|| / ||ref|| over the finite elements
  int64_t unwritten = 0;  // elements still NaN (the poison) or otherwise not finite
};

// Requires out.size() == ref.size().
ErrorStats CompareWithReference(absl::Span<const float> out, absl::Span<const double> ref);

struct KernelCheckResult {
  Arm arm;
  std::string kernel;  // sel_gu_silu, sel_down, read_floor_gu, read_floor_down
  ErrorStats error;
  bool passed = false;
  std::string detail;
};

class CheckObserver {
 public:
  virtual ~CheckObserver() = default;
  virtual void OnCheck(const KernelCheckResult& result) = 0;
};

// With `artifact_dir` (an existing directory the daemon made for the job) the banks, each arm's
// inputs and each kernel's outputs are written there as .npy files; empty: no files. Returns
// CANCELLED between arms once `cancelled` is set.
// `arms` is the probe's device code on `backend`; without it, the device's own MoeArmsOn.
absl::StatusOr<std::vector<KernelCheckResult>> RunExactnessCheck(
    const SweepSpec& spec, const std::string& artifact_dir, Backend& backend, MoeArms& arms,
    CheckObserver& observer, const std::atomic<bool>& cancelled);
absl::StatusOr<std::vector<KernelCheckResult>> RunExactnessCheck(
    const SweepSpec& spec, const std::string& artifact_dir, Backend& backend,
    CheckObserver& observer, const std::atomic<bool>& cancelled);

// What RunExactnessCheck writes to `artifact_dir`, in bytes (an upper bound).
int64_t EstimateDumpBytes(const SweepSpec& spec);

}  // namespace gpuprobe
