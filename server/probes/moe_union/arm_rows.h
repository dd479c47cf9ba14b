// Turns an arm's kept samples into the row users read: medians, spreads, both bandwidth
// columns and the ratio to the reference row (t == max t, union == slots, per-slot variant).
//
//   std::vector<ArmRow> rows = BuildRows(spec, arms, samples, backend.Description());
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/measure/comparison.h"
#include "server/measure/interleaved.h"
#include "server/measure/statistics.h"
#include "server/probes/moe_union/sweep_spec.h"

namespace gpuprobe {

// Bytes an arm's kernels read from the banks: every slot's expert for per-slot and floor, each
// group's expert once for union.
struct ArmReadBytes {
  int64_t gu = 0;
  int64_t down = 0;
};

// What every row says about where it was measured.
struct RowContext {
  std::string device;
  double calibrated_read_tbps = 0.0;  // 0: the backend has no calibration
};

struct ArmRow {
  int arm_index = 0;
  Arm arm;
  SampleStats gu;    // microseconds
  SampleStats down;  // microseconds
  double section_us = 0.0;
  double gu_bw_vs_union_tbps = 0.0;    // union * gate+up bytes / gu median
  double gu_bw_vs_slots_tbps = 0.0;    // slots * gate+up bytes / gu median
  std::optional<double> vs_reference;  // reference section / this section
  // 95% bootstrap intervals over the kept reps (comparison.h) of the medians and of
  // vs_reference, and the verdict of this arm against the reference row (threshold 2%).
  // No verdict without a reference row.
  Interval gu_interval, down_interval, vs_reference_interval;
  std::optional<Verdict> verdict;
  // What telemetry saw during the sweep that may have disturbed it (throttling, foreign
  // processes); empty when nothing.
  std::string disturbance;
  SamplingEnd sampling_end = SamplingEnd::kReps;  // the job's, in every row
  ArmReadBytes read_bytes;
  // read_bytes / median time as a percentage of the calibrated streaming read; 0 without one.
  double gu_pct_of_read_bw = 0.0;
  double down_pct_of_read_bw = 0.0;
  int kept_reps = 0;
  ArmSamples samples;  // the kept reps, in rep order: what comparisons resample
  // Each block's section (SweepSpec::blocks), in block order: the noise between placements.
  std::vector<double> block_section_us;
  TimingMode timing = TimingMode::kEvents;
  CacheMode cache = CacheMode::kWarm;
  std::string device;
};

// Index of the reference arm, if the sweep has one.
std::optional<int> ReferenceArm(const SweepSpec& spec, const std::vector<Arm>& arms);

// samples[i] and reads[i] belong to arms[i]; samples must be non-empty.
std::vector<ArmRow> BuildRows(const SweepSpec& spec, const std::vector<Arm>& arms,
                              const std::vector<ArmSamples>& samples,
                              const std::vector<ArmReadBytes>& reads, const RowContext& context);

}  // namespace gpuprobe
