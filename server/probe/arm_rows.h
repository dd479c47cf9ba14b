// Turns an arm's kept samples into the row users read: medians, spreads, both bandwidth
// columns and the ratio to the reference row (t == max t, union == slots, per-slot variant).
//
//   std::vector<ArmRow> rows = BuildRows(spec, arms, samples, backend.Description());
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "server/probe/statistics.h"
#include "server/probe/sweep_spec.h"

namespace gpuprobe {

// Samples of the kept reps (rep 0 excluded), microseconds.
struct ArmSamples {
  std::vector<double> gu_us;
  std::vector<double> down_us;
};

struct ArmRow {
  int arm_index = 0;
  Arm arm;
  SampleStats gu;    // microseconds
  SampleStats down;  // microseconds
  double section_us = 0.0;
  double gu_bw_vs_union_tbps = 0.0;  // union * gate+up bytes / gu median
  double gu_bw_vs_slots_tbps = 0.0;  // slots * gate+up bytes / gu median
  std::optional<double> vs_reference;  // reference section / this section
  int kept_reps = 0;
  TimingMode timing = TimingMode::kEvents;
  CacheMode cache = CacheMode::kWarm;
  std::string device;
};

// Index of the reference arm, if the sweep has one.
std::optional<int> ReferenceArm(const SweepSpec& spec, const std::vector<Arm>& arms);

// samples[i] belongs to arms[i]; each must be non-empty.
std::vector<ArmRow> BuildRows(const SweepSpec& spec, const std::vector<Arm>& arms,
                              const std::vector<ArmSamples>& samples, const std::string& device);

}  // namespace gpuprobe
