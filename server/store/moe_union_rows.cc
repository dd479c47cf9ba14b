#include "server/store/moe_union_rows.h"

#include <string>

#include "common/enum_names.h"
#include "common/result_values.h"

namespace gpuprobe {
namespace {

v1::MetricStats Metric(const std::string& name, double median, double min, double max,
                       double spread, double low, double high, uint32_t kept,
                       const google::protobuf::RepeatedField<double>& samples) {
  v1::MetricStats m;
  m.set_name(name);
  m.set_unit("us");
  m.set_median(median);
  m.set_min(min);
  m.set_max(max);
  m.set_spread(spread);
  m.set_low(low);
  m.set_high(high);
  m.set_kept(kept);
  *m.mutable_samples() = samples;
  return m;
}

const v1::MetricStats* FindMetric(const v1::Result& r, const std::string& name) {
  for (const v1::MetricStats& m : r.metrics()) {
    if (m.name() == name) return &m;
  }
  return nullptr;
}

std::optional<double> FindDerived(const v1::Result& r, const std::string& name) {
  for (const v1::DerivedValue& d : r.derived()) {
    if (d.name() == name) return d.value();
  }
  return std::nullopt;
}

}  // namespace

v1::Result ResultOfRow(const v1::Row& row) {
  v1::Result r;
  r.set_arm_index(row.arm_index());
  const google::protobuf::EnumValueDescriptor* variant =
      v1::KernelVariant_descriptor()->FindValueByNumber(row.arm().variant());
  *r.add_axes() =
      TextAxis("variant",
               variant != nullptr && variant->number() != 0 ? ShortEnumName(*variant) : "per-slot");
  *r.add_axes() = IntAxis("t", row.arm().t());
  *r.add_axes() = IntAxis("slots", row.arm().slots());
  *r.add_axes() = IntAxis("union", row.arm().union_size());
  *r.add_metrics() =
      Metric("gu_us", row.gu_us(), row.gu_min_us(), row.gu_max_us(), row.gu_spread(),
             row.gu_us_low(), row.gu_us_high(), row.kept_reps(), row.gu_samples_us());
  *r.add_metrics() =
      Metric("down_us", row.down_us(), row.down_min_us(), row.down_max_us(), row.dn_spread(),
             row.down_us_low(), row.down_us_high(), row.kept_reps(), row.down_samples_us());
  // 0: the backend had no calibrated read; such a share is absent from a Result.
  if (row.gu_pct_of_read_bw() > 0.0) {
    *r.add_derived() = Derived("gu_pct_of_read", "%", row.gu_pct_of_read_bw());
  }
  if (row.down_pct_of_read_bw() > 0.0) {
    *r.add_derived() = Derived("down_pct_of_read", "%", row.down_pct_of_read_bw());
  }
  *r.add_derived() = Derived("section_us", "us", row.section_us());
  *r.add_derived() = Derived("gu_bw_vs_union_tbps", "TB/s", row.gu_bw_vs_union_tbps());
  *r.add_derived() = Derived("gu_bw_vs_slots_tbps", "TB/s", row.gu_bw_vs_slots_tbps());
  *r.add_derived() = Derived("gu_read_bytes", "bytes", static_cast<double>(row.gu_read_bytes()));
  *r.add_derived() =
      Derived("down_read_bytes", "bytes", static_cast<double>(row.down_read_bytes()));
  if (row.has_vs_reference()) *r.add_derived() = Derived("vs_reference", "", row.vs_reference());
  if (row.has_vs_reference_low()) {
    *r.add_derived() = Derived("vs_reference_low", "", row.vs_reference_low());
  }
  if (row.has_vs_reference_high()) {
    *r.add_derived() = Derived("vs_reference_high", "", row.vs_reference_high());
  }
  r.set_verdict(row.verdict());
  r.set_disturbance(row.disturbance());
  r.set_attempt(row.attempt());
  r.set_device(row.device());
  r.set_job_id(row.job_id());
  r.set_sampling_end(row.sampling_end());
  *r.mutable_block_section_us() = row.block_section_us();
  return r;
}

std::optional<v1::Arm> ArmOfAxes(const google::protobuf::RepeatedPtrField<v1::AxisValue>& axes) {
  if (axes.size() != 4 || axes[0].name() != "variant" || axes[1].name() != "t" ||
      axes[2].name() != "slots" || axes[3].name() != "union") {
    return std::nullopt;
  }
  v1::Arm arm;
  const google::protobuf::EnumDescriptor& variants = *v1::KernelVariant_descriptor();
  for (int i = 1; i < variants.value_count(); ++i) {
    if (ShortEnumName(*variants.value(i)) == axes[0].text_value()) {
      arm.set_variant(static_cast<v1::KernelVariant>(variants.value(i)->number()));
    }
  }
  arm.set_t(static_cast<uint32_t>(axes[1].int_value()));
  arm.set_slots(static_cast<uint32_t>(axes[2].int_value()));
  arm.set_union_size(static_cast<uint32_t>(axes[3].int_value()));
  return arm;
}

v1::Row RowOfResult(const v1::Result& r, const v1::ResolvedSweep& sweep) {
  v1::Row row;
  row.set_arm_index(r.arm_index());
  if (std::optional<v1::Arm> arm = ArmOfAxes(r.axes())) *row.mutable_arm() = *arm;
  const v1::MetricStats empty;
  const v1::MetricStats* gu = FindMetric(r, "gu_us");
  const v1::MetricStats* down = FindMetric(r, "down_us");
  if (gu == nullptr) gu = &empty;
  if (down == nullptr) down = &empty;
  row.set_gu_us(gu->median());
  row.set_down_us(down->median());
  row.set_gu_spread(gu->spread());
  row.set_dn_spread(down->spread());
  row.set_gu_min_us(gu->min());
  row.set_gu_max_us(gu->max());
  row.set_down_min_us(down->min());
  row.set_down_max_us(down->max());
  row.set_kept_reps(gu->kept());
  *row.mutable_gu_samples_us() = gu->samples();
  *row.mutable_down_samples_us() = down->samples();
  row.set_gu_us_low(gu->low());
  row.set_gu_us_high(gu->high());
  row.set_down_us_low(down->low());
  row.set_down_us_high(down->high());
  row.set_section_us(FindDerived(r, "section_us").value_or(gu->median() + down->median()));
  row.set_gu_bw_vs_union_tbps(FindDerived(r, "gu_bw_vs_union_tbps").value_or(0.0));
  row.set_gu_bw_vs_slots_tbps(FindDerived(r, "gu_bw_vs_slots_tbps").value_or(0.0));
  row.set_gu_read_bytes(static_cast<uint64_t>(FindDerived(r, "gu_read_bytes").value_or(0.0)));
  row.set_down_read_bytes(static_cast<uint64_t>(FindDerived(r, "down_read_bytes").value_or(0.0)));
  row.set_gu_pct_of_read_bw(FindDerived(r, "gu_pct_of_read").value_or(0.0));
  row.set_down_pct_of_read_bw(FindDerived(r, "down_pct_of_read").value_or(0.0));
  if (std::optional<double> v = FindDerived(r, "vs_reference")) row.set_vs_reference(*v);
  if (std::optional<double> v = FindDerived(r, "vs_reference_low")) row.set_vs_reference_low(*v);
  if (std::optional<double> v = FindDerived(r, "vs_reference_high")) {
    row.set_vs_reference_high(*v);
  }
  row.set_verdict(r.verdict());
  row.set_timing(sweep.timing());
  row.set_cache(sweep.cache());
  row.set_device(r.device());
  row.set_plan_in_timed_region(false);  // plans are built before timing
  row.set_attempt(r.attempt());
  row.set_disturbance(r.disturbance());
  row.set_sampling_end(r.sampling_end());
  row.set_job_id(r.job_id());
  *row.mutable_block_section_us() = r.block_section_us();
  return row;
}

v1::JobEvent UpgradedEvent(v1::JobEvent event) {
  if (!event.has_row()) return event;
  v1::Result result = ResultOfRow(event.row());
  *event.mutable_result() = std::move(result);
  return event;
}

}  // namespace gpuprobe
