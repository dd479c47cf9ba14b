#include "server/probes/moe_union/moe_union_mapping.h"

#include "absl/strings/str_format.h"
#include "common/param_text.h"
#include "common/status_macros.h"
#include "server/probes/job_events.h"
#include "server/probes/results.h"

namespace gpuprobe {
namespace {

absl::Status UnknownEnum(std::string_view field, int value) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: unknown value %d", field, value));
}

absl::StatusOr<std::vector<KernelVariant>> VariantsFromProto(
    const google::protobuf::RepeatedField<int>& variants) {
  std::vector<KernelVariant> out;
  for (int v : variants) {
    switch (v) {
      case v1::KERNEL_VARIANT_UNSPECIFIED:
      case v1::KERNEL_VARIANT_PER_SLOT:
        out.push_back(KernelVariant::kPerSlot);
        break;
      case v1::KERNEL_VARIANT_UNION:
        out.push_back(KernelVariant::kUnion);
        break;
      case v1::KERNEL_VARIANT_FLOOR:
        out.push_back(KernelVariant::kFloor);
        break;
      case v1::KERNEL_VARIANT_FLOOR_DISTINCT:
        out.push_back(KernelVariant::kFloorDistinct);
        break;
      default:
        return UnknownEnum("variants", v);
    }
  }
  return out;
}

}  // namespace

v1::SweepRequest SweepOfCheck(const v1::CheckRequest& check) {
  v1::SweepRequest sweep;
  *sweep.mutable_geometry() = check.geometry();
  if (check.has_t()) sweep.add_t_values(check.t());
  *sweep.mutable_unions() = check.unions();
  sweep.set_reps(2);  // an exactness job times nothing; the smallest valid value
  *sweep.mutable_variants() = check.variants();
  if (check.has_seed()) sweep.set_seed(check.seed());
  return sweep;
}

namespace {

// A filled request's geometry, seed and variants, as its spec holds them.
absl::StatusOr<SweepSpec> SpecOfFilled(const v1::Geometry& g, uint64_t seed,
                                       const google::protobuf::RepeatedField<int>& variants) {
  SweepSpec spec;
  spec.geometry = {.experts = static_cast<int>(g.experts()),
                   .hidden = static_cast<int>(g.hidden()),
                   .ff = static_cast<int>(g.ff()),
                   .selected = static_cast<int>(g.selected())};
  spec.seed = seed;
  ASSIGN_OR_RETURN(spec.variants, VariantsFromProto(variants));
  return spec;
}

}  // namespace

absl::StatusOr<SweepSpec> SpecOfFilled(const v1::SweepRequest& r) {
  ASSIGN_OR_RETURN(SweepSpec spec, SpecOfFilled(r.geometry(), r.seed(), r.variants()));
  spec.t_values.assign(r.t_values().begin(), r.t_values().end());
  spec.unions.assign(r.unions().begin(), r.unions().end());
  spec.reps = static_cast<int>(r.reps());
  spec.blocks = static_cast<int>(r.blocks());
  spec.timing = TimingFromProto(r.timing());
  spec.cache = CacheFromProto(r.cache());
  spec.order = OrderFromProto(r.order());
  spec.require_clean = r.require_clean();
  spec.precision = r.precision();
  spec.max_seconds = r.max_seconds();
  return spec;
}

absl::StatusOr<SweepSpec> SpecOfFilled(const v1::CheckRequest& r) {
  ASSIGN_OR_RETURN(SweepSpec spec, SpecOfFilled(r.geometry(), r.seed(), r.variants()));
  spec.t_values = {static_cast<int>(r.t())};
  spec.unions.assign(r.unions().begin(), r.unions().end());
  spec.reps = 2;  // an exactness job times nothing; as SweepOfCheck asks
  return spec;
}

v1::SweepRequest FilledSweepRequest(const SweepSpec& spec) {
  v1::SweepRequest r;
  v1::Geometry* g = r.mutable_geometry();
  g->set_experts(spec.geometry.experts);
  g->set_hidden(spec.geometry.hidden);
  g->set_ff(spec.geometry.ff);
  g->set_selected(spec.geometry.selected);
  for (int t : spec.t_values) r.add_t_values(t);
  for (int u : spec.unions) r.add_unions(u);
  r.set_reps(spec.reps);
  r.set_blocks(spec.blocks);
  r.set_timing(TimingToProto(spec.timing));
  r.set_cache(CacheToProto(spec.cache));
  for (KernelVariant v : spec.variants) r.add_variants(VariantToProto(v));
  r.set_seed(spec.seed);
  r.set_order(OrderToProto(spec.order));
  r.set_require_clean(spec.require_clean);
  if (spec.precision > 0.0) {
    r.set_precision(spec.precision);
    r.set_max_seconds(spec.max_seconds);
  }
  return r;
}

v1::CheckRequest FilledCheckRequest(const SweepSpec& spec, bool dump) {
  v1::CheckRequest r;
  v1::Geometry* g = r.mutable_geometry();
  g->set_experts(spec.geometry.experts);
  g->set_hidden(spec.geometry.hidden);
  g->set_ff(spec.geometry.ff);
  g->set_selected(spec.geometry.selected);
  r.set_t(spec.t_max());
  for (int u : spec.unions) r.add_unions(u);
  for (KernelVariant v : spec.variants) r.add_variants(VariantToProto(v));
  r.set_seed(spec.seed);
  r.set_dump(dump);
  return r;
}

v1::KernelVariant VariantToProto(KernelVariant variant) {
  switch (variant) {
    case KernelVariant::kPerSlot:
      return v1::KERNEL_VARIANT_PER_SLOT;
    case KernelVariant::kUnion:
      return v1::KERNEL_VARIANT_UNION;
    case KernelVariant::kFloor:
      return v1::KERNEL_VARIANT_FLOOR;
    case KernelVariant::kFloorDistinct:
      return v1::KERNEL_VARIANT_FLOOR_DISTINCT;
  }
  return v1::KERNEL_VARIANT_UNSPECIFIED;
}

std::vector<v1::AxisValue> ArmAxes(const v1::Arm& arm) {
  const google::protobuf::EnumValueDescriptor* variant =
      v1::KernelVariant_descriptor()->FindValueByNumber(arm.variant());
  return {TextAxis("variant", variant != nullptr ? EnumValueText(*variant) : "per-slot"),
          IntAxis("t", arm.t()), IntAxis("slots", arm.slots()), IntAxis("union", arm.union_size())};
}

std::vector<v1::AxisValue> ArmAxes(const Arm& arm) {
  v1::Arm proto;
  proto.set_variant(VariantToProto(arm.variant));
  proto.set_t(arm.t);
  proto.set_slots(arm.slots);
  proto.set_union_size(arm.union_size);
  return ArmAxes(proto);
}

v1::ResolvedSweep ResolvedSweepToProto(const SweepSpec& spec, const std::vector<Arm>& arms) {
  v1::ResolvedSweep out;
  out.set_experts(spec.geometry.experts);
  out.set_hidden(spec.geometry.hidden);
  out.set_ff(spec.geometry.ff);
  out.set_selected(spec.geometry.selected);
  for (int t : spec.t_values) out.add_t_values(t);
  out.set_reps(spec.reps);
  out.set_blocks(spec.blocks);
  out.set_timing(TimingToProto(spec.timing));
  out.set_cache(CacheToProto(spec.cache));
  out.set_order(OrderToProto(spec.order));
  out.set_seed(spec.seed);
  out.set_gu_expert_bytes(GateUpExpertBytes(spec.geometry));
  out.set_down_expert_bytes(DownExpertBytes(spec.geometry));
  for (const Arm& arm : arms) {
    v1::Arm* a = out.add_arms();
    a->set_variant(VariantToProto(arm.variant));
    a->set_t(arm.t);
    a->set_slots(arm.slots);
    a->set_union_size(arm.union_size);
  }
  out.set_estimated_device_bytes(EstimateDeviceBytes(spec, arms));
  return out;
}

v1::JobEvent CheckEvent(const KernelCheckResult& r) {
  v1::JobEvent event;
  v1::KernelCheck* c = event.mutable_check();
  c->set_variant(VariantToProto(r.arm.variant));
  c->set_kernel(r.kernel);
  c->set_t(r.arm.t);
  c->set_union_size(r.arm.union_size);
  c->set_max_rel_error(r.error.max_rel);
  c->set_mean_rel_error(r.error.mean_rel);
  c->set_unwritten(r.error.unwritten);
  c->set_tolerance(kExactnessTolerance);
  c->set_norm_rel_error(r.error.norm_rel);
  c->set_norm_tolerance(kNormTolerance);
  c->set_passed(r.passed);
  c->set_detail(r.detail);
  return event;
}

}  // namespace gpuprobe
