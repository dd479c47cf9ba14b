#include "server/probes/moe_union/arm_rows.h"

#include "server/measure/bandwidth.h"

namespace gpuprobe {

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
    // 0: the device has no calibrated read.
    row.gu_pct_of_read_bw = PercentOfRead(Tbps(static_cast<double>(reads[i].gu), row.gu.median),
                                          context.calibrated_read_tbps)
                                .value_or(0.0);
    row.down_pct_of_read_bw =
        PercentOfRead(Tbps(static_cast<double>(reads[i].down), row.down.median),
                      context.calibrated_read_tbps)
            .value_or(0.0);
    row.section_us = row.gu.median + row.down.median;
    row.gu_bw_vs_union_tbps = Tbps(arms[i].union_size * gu_expert_bytes, row.gu.median);
    row.gu_bw_vs_slots_tbps = Tbps(arms[i].slots * gu_expert_bytes, row.gu.median);
    rows.push_back(std::move(row));
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    // Seeded per arm from the job's seed: the same rows give the same intervals.
    const ComparisonOptions options{.seed = spec.seed ^ (0x9E3779B97F4A7C15ull * (i + 1))};
    rows[i].gu_interval = MedianInterval(samples[i].gu_us, options);
    rows[i].down_interval = MedianInterval(samples[i].down_us, options);
  }
  if (std::optional<int> ref = ReferenceArm(spec, arms)) {
    const double ref_section = rows[*ref].section_us;
    for (size_t i = 0; i < rows.size(); ++i) {
      ArmRow& row = rows[i];
      if (row.section_us <= 0.0) continue;
      row.vs_reference = ref_section / row.section_us;
      // This arm's time over the reference's: the verdict reads "this arm is faster/slower".
      const RatioEstimate r = CompareSections(samples[*ref], samples[i],
                                              ComparisonOptions{.seed = spec.seed ^ (i + 1)});
      row.verdict = r.verdict;
      row.vs_reference_interval = {r.high > 0 ? 1.0 / r.high : 0.0, r.low > 0 ? 1.0 / r.low : 0.0};
    }
  }
  return rows;
}

}  // namespace gpuprobe
