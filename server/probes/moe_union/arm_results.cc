#include "server/probes/moe_union/arm_results.h"

#include "server/measure/bandwidth.h"
#include "server/measure/comparison.h"
#include "server/probes/job_events.h"
#include "server/probes/results.h"

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

void DeriveArmValues(const SweepSpec& spec, const std::vector<Arm>& arms,
                     const std::vector<ArmReadBytes>& reads, const Measurement& measured,
                     std::vector<v1::Result>& results) {
  const double gu_expert_bytes = static_cast<double>(GateUpExpertBytes(spec.geometry));
  std::vector<double> sections(arms.size());
  for (size_t i = 0; i < arms.size(); ++i) {
    v1::Result& r = results[i];
    const double gu_us = r.metrics(0).median();
    sections[i] = gu_us + r.metrics(1).median();
    *r.add_derived() = Derived("section_us", "us", sections[i]);
    *r.add_derived() =
        Derived("gu_bw_vs_union_tbps", "TB/s", Tbps(arms[i].union_size * gu_expert_bytes, gu_us));
    *r.add_derived() =
        Derived("gu_bw_vs_slots_tbps", "TB/s", Tbps(arms[i].slots * gu_expert_bytes, gu_us));
    *r.add_derived() = Derived("gu_read_bytes", "bytes", static_cast<double>(reads[i].gu));
    *r.add_derived() = Derived("down_read_bytes", "bytes", static_cast<double>(reads[i].down));
  }
  const std::optional<int> ref = ReferenceArm(spec, arms);
  if (!ref) return;
  const ArmSamples reference{measured.samples[*ref][0], measured.samples[*ref][1]};
  for (size_t i = 0; i < arms.size(); ++i) {
    if (sections[i] <= 0.0) continue;
    v1::Result& r = results[i];
    // This arm's time over the reference's: the verdict reads "this arm is faster/slower".
    const RatioEstimate ratio =
        CompareSections(reference, {measured.samples[i][0], measured.samples[i][1]},
                        ComparisonOptions{.seed = spec.seed ^ (i + 1)});
    *r.add_derived() = Derived("vs_reference", "", sections[*ref] / sections[i]);
    *r.add_derived() = Derived("vs_reference_low", "", ratio.high > 0 ? 1.0 / ratio.high : 0.0);
    *r.add_derived() = Derived("vs_reference_high", "", ratio.low > 0 ? 1.0 / ratio.low : 0.0);
    r.set_verdict(VerdictToProto(ratio.verdict));
  }
}

}  // namespace gpuprobe
