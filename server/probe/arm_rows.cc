#include "server/probe/arm_rows.h"

namespace gpuprobe {
namespace {

// bytes / microseconds / 1e6 = terabytes per second.
double Tbps(double bytes, double us) { return us > 0.0 ? bytes / us / 1e6 : 0.0; }

}  // namespace

std::optional<int> ReferenceArm(const SweepSpec& spec, const std::vector<Arm>& arms) {
  for (size_t i = 0; i < arms.size(); ++i) {
    const Arm& a = arms[i];
    if (a.variant == KernelVariant::kPerSlot && a.t == spec.t_max() && a.union_size == a.slots) {
      return static_cast<int>(i);
    }
  }
  return std::nullopt;
}

std::vector<ArmRow> BuildRows(const SweepSpec& spec, const std::vector<Arm>& arms,
                              const std::vector<ArmSamples>& samples,
                              const std::vector<ArmReadBytes>& reads, const RowContext& context) {
  const double gu_expert_bytes = static_cast<double>(GateUpExpertBytes(spec.geometry));
  std::vector<ArmRow> rows;
  rows.reserve(arms.size());
  for (size_t i = 0; i < arms.size(); ++i) {
    ArmRow row{.arm_index = static_cast<int>(i),
               .arm = arms[i],
               .gu = Summarize(samples[i].gu_us),
               .down = Summarize(samples[i].down_us),
               .read_bytes = reads[i],
               .kept_reps = static_cast<int>(samples[i].gu_us.size()),
               .samples = samples[i],
               .timing = spec.timing,
               .cache = spec.cache,
               .device = context.device};
    if (context.calibrated_read_tbps > 0.0) {
      row.gu_pct_of_read_bw = 100.0 * Tbps(static_cast<double>(reads[i].gu), row.gu.median) /
                              context.calibrated_read_tbps;
      row.down_pct_of_read_bw = 100.0 * Tbps(static_cast<double>(reads[i].down), row.down.median) /
                                context.calibrated_read_tbps;
    }
    row.section_us = row.gu.median + row.down.median;
    row.gu_bw_vs_union_tbps = Tbps(arms[i].union_size * gu_expert_bytes, row.gu.median);
    row.gu_bw_vs_slots_tbps = Tbps(arms[i].slots * gu_expert_bytes, row.gu.median);
    rows.push_back(std::move(row));
  }
  if (std::optional<int> ref = ReferenceArm(spec, arms)) {
    const double ref_section = rows[*ref].section_us;
    for (ArmRow& row : rows) {
      if (row.section_us > 0.0) row.vs_reference = ref_section / row.section_us;
    }
  }
  return rows;
}

}  // namespace gpuprobe
