// The values the moe-union probe derives from each arm's measured gate+up and down times, on top
// of those the measuring helper derives from the bytes each launch reads (gu_tbps,
// gu_pct_of_read, down_tbps, down_pct_of_read): the section, both bandwidth columns of the
// seed's table, the bytes read, and the ratio to the reference row (t == max t, union == slots,
// per-slot variant) with its interval and verdict.
//
//   MeasureArms(spec, place, device, publish, cancelled,
//               [&](const Measurement& m, std::vector<v1::Result>& results) {
//                 DeriveArmValues(sweep, arms, reads, m, results);
//               });
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gpuprobe/v1/probe.pb.h"
#include "server/probes/measure_arms.h"
#include "server/probes/moe_union/sweep_spec.h"

namespace gpuprobe {

// Bytes an arm's kernels read from the banks: every slot's expert for per-slot and floor, each
// group's expert once for union.
struct ArmReadBytes {
  int64_t gu = 0;
  int64_t down = 0;
};

// Index of the reference arm, if the sweep has one.
std::optional<int> ReferenceArm(const SweepSpec& spec, const std::vector<Arm>& arms);

// Adds to results[i] (arm i's, its metrics gu_us then down_us) section_us, gu_bw_vs_union_tbps,
// gu_bw_vs_slots_tbps, gu_read_bytes and down_read_bytes; where the sweep has a reference row,
// vs_reference (reference section / this section) with vs_reference_low and vs_reference_high
// (its 95% bootstrap interval over both arms' kept reps) and the verdict against the reference
// (threshold 2%). reads[i] belongs to arms[i].
void DeriveArmValues(const SweepSpec& spec, const std::vector<Arm>& arms,
                     const std::vector<ArmReadBytes>& reads, const Measurement& measured,
                     std::vector<v1::Result>& results);

}  // namespace gpuprobe
