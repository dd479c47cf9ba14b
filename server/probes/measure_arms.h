// The one measuring helper every timed probe runs on (nvbench's state.exec): a probe declares
// its arms (axes, timing and cache, one or more launches with the bytes they move and the flops
// they do) and hands over each block's launches; MeasureArms times them on the measurement
// module (interleaved rep by rep, rep 0 thrown away, blocks on fresh placements, sampling until
// precise, telemetry after each rep), publishes progress and telemetry, and publishes one Result
// per arm: a metric per launch, the derived values its declaration implies and those the probe
// adds, the disturbance, the device and what ended the sampling. TimeArms is the timing alone,
// for a probe that makes its own records of what was measured (moe-union's rows).
//
//   MeasurementSpec spec{.arms = {{.axes = {IntAxis("size_bytes", n)},
//                                  .launches = {{.metric = "read_us", .bytes_read = n}}}},
//                        .reps = 20};
//   return MeasureArms(spec, [&](int) { return launches; }, device, publish, cancelled);
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/device/backend.h"
#include "server/measure/arm_order.h"
#include "server/measure/interleaved.h"
#include "server/probes/probe.h"

namespace gpuprobe {

// One timed launch of an arm: its metric (microseconds) and what it moves and computes.
struct LaunchDeclaration {
  std::string metric;  // "read_us"; ends in "_us"
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  double flops = 0.0;
};

struct ArmDeclaration {
  std::vector<v1::AxisValue> axes;  // in ProbeInfo.axes order
  TimingOptions timing;
  std::vector<LaunchDeclaration> launches;  // timed one after the other in each rep; at least one
};

struct MeasurementSpec {
  std::vector<ArmDeclaration> arms;  // every arm has as many launches as the first
  int reps = 0;                      // including rep 0, which is dropped; per block
  ArmOrder order = ArmOrder::kFixed;
  uint64_t seed = 0;  // of the shuffled order (each block after the first draws its own)
  bool require_clean = false;
  SamplingRule sampling;  // max_seconds for the whole job: each block gets its share
  // Blocks of reps, each on launches placed anew (fresh memory): the noise between placements
  // enters every arm's samples.
  int blocks = 1;
};

// What the arms measured, for a probe's own derived values.
struct Measurement {
  // [arm][launch]: every block's kept samples, block after block, in rep order.
  std::vector<std::vector<std::vector<double>>> samples;
  // [arm][launch]: each block's median, in block order.
  std::vector<std::vector<std::vector<double>>> block_medians;
  int kept_reps = 0;  // over all blocks
  // What ended the sampling: the first block that ran out of time or reps, else how the last
  // block ended.
  SamplingEnd ended_by = SamplingEnd::kReps;
  // What the first disturbed reading said ("block 1, rep 3: ..." with several blocks); empty
  // when none was.
  std::string disturbance;
};

// The launches of block `block`, [arm][launch] in the spec's order; they stay valid until the
// next call (or until MeasureArms returns).
using PlaceLaunches =
    std::function<absl::StatusOr<std::vector<std::vector<DeviceLaunch*>>>(int block)>;

// Adds a probe's own derived values to every arm's result (a ratio to a reference arm, say),
// after those the declarations imply.
using DeriveValues = std::function<void(const Measurement&, std::vector<v1::Result>&)>;

// Derived values per launch with bytes: `tbps` (bytes read and written / median) and, where the
// device has a calibrated read, `pct_of_read`; with flops: `tflops`. An arm of several launches
// prefixes each with its metric's stem ("gu_us": "gu_tbps").
std::vector<v1::DerivedValue> DeclaredDerived(const LaunchDeclaration& launch, bool only_launch,
                                              double median_us, double calibrated_read_tbps);

// Times the spec's arms on `device`, block after block, each block's launches placed anew by
// `place`; `observer` hears the job's reps over all blocks and every telemetry reading. Once
// `cancelled`, CANCELLED, with `partial` (if not null) holding the reps that completed (kept_reps
// may be 0). INVALID_ARGUMENT for a malformed spec; a placement's or a launch's error as it came;
// FAILED_PRECONDITION when require_clean saw a disturbed reading.
absl::StatusOr<Measurement> TimeArms(const MeasurementSpec& spec, const PlaceLaunches& place,
                                     Backend& device, RepObserver& observer,
                                     const std::atomic<bool>& cancelled,
                                     Measurement* partial = nullptr);

// TimeArms, publishing progress, telemetry and one result per arm
// (results also when cancelled after at least one kept rep: then CANCELLED). The outcome's
// status is the first error: INVALID_ARGUMENT for a malformed spec, a placement's or a launch's
// error as it came, FAILED_PRECONDITION when require_clean saw a disturbed reading.
JobOutcome MeasureArms(const MeasurementSpec& spec, const PlaceLaunches& place, Backend& device,
                       const EventPublisher& publish, const std::atomic<bool>& cancelled,
                       const DeriveValues& derive = nullptr);

}  // namespace gpuprobe
