// The exactness job: every arm of a spec runs each kernel once, untimed, on the backend, with
// its output poisoned first, and is compared with the float64 reference on the same fresh
// random banks, activations and routing. The floor, which computes nothing, is checked by its
// XOR of the words it read against the host's XOR of the bytes it had to read.
//
//   ASSIGN_OR_RETURN(std::vector<KernelCheckResult> checks,
//                    RunExactnessCheck(spec, dump_dir, backend, observer, cancelled));
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/device/backend.h"
#include "server/probe/sweep_spec.h"

namespace gpuprobe {

// max |out - ref| / max(|ref|, kRelErrorFloor * max|ref|) a kernel may reach. The cuda kernels
// multiply exact f16 weights by inputs split into f16 hi + lo parts (about 2^-22 of each input
// lost) and accumulate in f32 on the tensor cores: the error is f32 summation error, far below
// this bar, while a wrong nibble, scale, row or slot lands far above it.
inline constexpr double kExactnessTolerance = 1e-3;
// Elements smaller than this share of the largest reference element are judged against it
// instead of themselves (cancellation leaves them with no meaningful relative error).
inline constexpr double kRelErrorFloor = 1e-3;

struct ErrorStats {
  double max_rel = 0.0;
  double mean_rel = 0.0;
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

// `dump_dir` empty: no files. Returns CANCELLED between arms once `cancelled` is set.
absl::StatusOr<std::vector<KernelCheckResult>> RunExactnessCheck(
    const SweepSpec& spec, const std::string& dump_dir, Backend& backend,
    CheckObserver& observer, const std::atomic<bool>& cancelled);

}  // namespace gpuprobe
