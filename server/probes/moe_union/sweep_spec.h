// A sweep as a user asks for it (a SweepRequest: every field optional, its defaults and limits
// declared on the proto: DESIGN.md's serving geometry), the validated result (SweepSpec) and its
// arms.
//
//   v1::SweepRequest request;
//   request.mutable_geometry()->set_hidden(512);
//   ASSIGN_OR_RETURN(SweepSpec spec, ResolveSweep(request, SweepLimits{}));
//   std::vector<Arm> arms = ExpandArms(spec);
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuprobe/v1/probe.pb.h"
#include "kernels/moe_geometry.h"
#include "server/device/backend.h"
#include "server/measure/arm_order.h"
#include "server/measure/interleaved.h"
#include "server/probes/moe_union/moe_arms.h"

namespace gpuprobe {

// Bounds across fields and on the sweep as a whole; each field's own default and limits are its
// (param) declaration in moe_union.proto. Every one is checked before anything runs.
struct SweepLimits {
  int max_reps = 10000;  // a block's sampling until precise grows reps up to this
  int max_arms = 4096;
  int64_t max_arm_reps = 1'000'000;  // arms * reps * blocks
  int max_labels = 64;
  int max_label_bytes = 256;  // key or value
  // Sampling until precise, seconds; admission bounds the job by --max-job-seconds too.
  double max_seconds = 86400;
};

struct SweepSpec {
  MoeGeometry geometry;
  std::vector<int> t_values;  // ascending, distinct
  std::vector<int>
      unions;    // explicit union sizes, each at every t where it fits; empty: the default ladder
  int reps = 0;  // per block, including the block's throwaway rep 0
  // Independent blocks of reps: before each, the banks move to fresh memory (MoeArms::
  // PlaceBanks) and, with a shuffled order, the order is drawn again; rows keep each block's
  // section, from which one job estimates the noise between placements.
  int blocks = 1;
  TimingMode timing = TimingMode::kEvents;
  CacheMode cache = CacheMode::kWarm;
  ArmOrder order = ArmOrder::kFixed;  // within each rep
  // Fail at the first telemetry reading that shows throttling or a foreign process.
  bool require_clean = false;
  // Sampling until precise enough (interleaved.h); precision 0: exactly `reps`.
  double precision = 0.0;
  double max_seconds = 0.0;
  std::vector<KernelVariant> variants;  // distinct, in request order
  uint64_t seed = 0;
  std::map<std::string, std::string> labels;

  int t_max() const { return t_values.back(); }
};

struct Arm {
  KernelVariant variant = KernelVariant::kPerSlot;
  int t = 0;
  int slots = 0;  // t * selected
  int union_size = 0;

  friend bool operator==(const Arm&, const Arm&) = default;
};

// At most max_labels labels, each key non-empty, key and value at most max_label_bytes.
absl::Status CheckLabels(const std::map<std::string, std::string>& labels, const SweepLimits& l);

// The most reps a block's sampling until precise may take: the limits' reps, and arm-reps over
// arms and blocks.
int MostReps(const SweepSpec& spec, const SweepLimits& limits);

// The request completed (every unset field its declared default, every field within its declared
// limits), then checked across fields: selected at most experts, every union fitting some t and
// every t some union, the arms and labels within `limits`. INVALID_ARGUMENT names the field, the
// value and the limit.
absl::StatusOr<SweepSpec> ResolveSweep(gpuprobe::v1::SweepRequest request,
                                       const SweepLimits& limits);

// The arms in run order: variant, then t ascending, then union ascending.
std::vector<Arm> ExpandArms(const SweepSpec& spec);

// Bytes a backend needs for the sweep: the banks of every expert, a second copy of the largest
// bank tensor (PlaceBanks copies each tensor before it frees the old), and each arm's inputs
// and outputs (fp32 x, h, y and int32 routing).
int64_t EstimateDeviceBytes(const SweepSpec& spec, const std::vector<Arm>& arms);

}  // namespace gpuprobe
