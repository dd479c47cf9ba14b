#include "server/probes/moe_union/moe_union_probe.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu_backend.h"
#include "server/probes/moe_union/moe_union_mapping.h"
#include "server/probes/registry.h"
#include "tests/probes/resolved_spec.h"

namespace gpuprobe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::ProbeRequest Request(const v1::SweepRequest& sweep) {
  v1::SubmitRequest submit;
  *submit.mutable_sweep() = sweep;
  return *ProbeRequestOf(submit);
}

TEST(MoeUnionProbeTest, ResolveFillsEveryDefaultAndResolvingTheResultChangesNothing) {
  const MoeUnionProbe probe{SweepLimits{}};
  absl::StatusOr<ProbeSpec> any = probe.Resolve(Request(v1::SweepRequest()));
  ASSERT_TRUE(any.ok()) << any.status();
  const v1::SweepRequest r = Resolved<v1::SweepRequest>(*any);
  EXPECT_EQ(r.geometry().experts(), 512u);
  EXPECT_EQ(r.geometry().hidden(), 2560u);
  EXPECT_EQ(r.geometry().ff(), 640u);
  EXPECT_EQ(r.geometry().selected(), 10u);
  EXPECT_THAT(r.t_values(), ElementsAre(1u, 2u, 3u, 4u, 5u, 6u));
  EXPECT_EQ(r.reps(), 20u);
  EXPECT_EQ(r.timing(), v1::TIMING_MODE_EVENTS);
  EXPECT_EQ(r.cache(), v1::CACHE_MODE_WARM);
  EXPECT_EQ(r.order(), v1::ARM_ORDER_FIXED);
  EXPECT_THAT(r.variants(), ElementsAre(v1::KERNEL_VARIANT_PER_SLOT));
  EXPECT_EQ(r.seed(), 1u);
  // Nothing left to default: the stored spec resolves to itself.
  absl::StatusOr<ProbeSpec> again = probe.Resolve(Request(r));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->SerializeAsString(), (*any)->SerializeAsString());
}

// Plan and Run take the spec as admission resolved it, without resolving it again: what they
// read is exactly what was stored.
TEST(MoeUnionProbeTest, PlanAndRunReadTheStoredSpecAsItIs) {
  const MoeUnionProbe probe{SweepLimits{}};
  v1::SweepRequest sweep;
  sweep.mutable_geometry()->set_experts(64);
  sweep.mutable_geometry()->set_selected(4);
  sweep.add_t_values(2);
  sweep.add_t_values(5);
  sweep.add_unions(8);
  sweep.add_variants(v1::KERNEL_VARIANT_UNION);
  sweep.add_variants(v1::KERNEL_VARIANT_PER_SLOT);
  sweep.set_timing(v1::TIMING_MODE_GRAPH);
  sweep.set_cache(v1::CACHE_MODE_COLD);
  sweep.set_order(v1::ARM_ORDER_SHUFFLE);
  sweep.set_precision(0.01);
  sweep.set_max_seconds(7);
  sweep.set_blocks(3);
  sweep.set_require_clean(true);
  absl::StatusOr<ProbeSpec> any = probe.Resolve(Request(sweep));
  ASSERT_TRUE(any.ok()) << any.status();
  absl::StatusOr<SweepSpec> spec = MoeUnionSpecOf(**any, /*check=*/false);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(FilledSweepRequest(*spec).SerializeAsString(),
            Resolved<v1::SweepRequest>(*any).SerializeAsString());
  EXPECT_EQ(spec->order, ArmOrder::kShuffle);
  EXPECT_EQ(spec->blocks, 3);
  EXPECT_EQ(ExpandArms(*spec).size(), 4u);  // union 8 at t = 2 and t = 5, both variants

  v1::ProbeRequest check;
  check.set_probe("moe-union");
  check.set_check(true);
  check.mutable_params()->PackFrom(v1::CheckRequest());
  absl::StatusOr<ProbeSpec> checked = probe.Resolve(check);
  ASSERT_TRUE(checked.ok()) << checked.status();
  absl::StatusOr<SweepSpec> check_spec = MoeUnionSpecOf(**checked, /*check=*/true);
  ASSERT_TRUE(check_spec.ok()) << check_spec.status();
  const v1::CheckRequest stored = Resolved<v1::CheckRequest>(*checked);
  EXPECT_EQ(FilledCheckRequest(*check_spec, stored.dump()).SerializeAsString(),
            stored.SerializeAsString());
  EXPECT_EQ(MoeUnionSpecOf(**any, /*check=*/true).status().code(), absl::StatusCode::kInternal);

  // As stored, the spec opens to what Resolve returned; packed as another type it is damage.
  google::protobuf::Any packed;
  packed.PackFrom(**any);
  absl::StatusOr<ProbeSpec> opened = probe.Open(packed, /*check=*/false);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ((*opened)->SerializeAsString(), (*any)->SerializeAsString());
  EXPECT_EQ(probe.Open(packed, /*check=*/true).status().code(), absl::StatusCode::kDataLoss);
}

TEST(MoeUnionProbeTest, TextParametersResolveAsTheMessageDoes) {
  const MoeUnionProbe probe{SweepLimits{}};
  v1::SweepRequest sweep;
  sweep.mutable_geometry()->set_hidden(512);
  sweep.mutable_geometry()->set_ff(128);
  sweep.add_t_values(2);
  sweep.set_timing(v1::TIMING_MODE_GRAPH);
  v1::ProbeRequest text;
  text.set_probe("moe-union");
  (*text.mutable_param_values())["hidden"] = "512";
  (*text.mutable_param_values())["ff"] = "128";
  (*text.mutable_param_values())["t_values"] = "2";
  (*text.mutable_param_values())["timing"] = "graph";
  absl::StatusOr<ProbeSpec> a = probe.Resolve(Request(sweep));
  absl::StatusOr<ProbeSpec> b = probe.Resolve(text);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->SerializeAsString(), (*b)->SerializeAsString());
}

TEST(MoeUnionProbeTest, BadParametersAreRefusedNamingTheFieldAndLimit) {
  const MoeUnionProbe probe{SweepLimits{}};
  v1::SweepRequest sweep;
  sweep.mutable_geometry()->set_hidden(100);
  const absl::StatusOr<ProbeSpec> r = probe.Resolve(Request(sweep));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("hidden"));
  v1::ProbeRequest labelled = Request(v1::SweepRequest());
  v1::SweepRequest inner;
  (*inner.mutable_labels())["a"] = "b";
  labelled.mutable_params()->PackFrom(inner);
  EXPECT_THAT(probe.Resolve(labelled).status().message(), HasSubstr("params.labels"));
}

TEST(MoeUnionProbeTest, ACheckKeepsItsSeedOrDrawsOneThatIsStored) {
  const MoeUnionProbe probe{SweepLimits{}};
  v1::SubmitRequest submit;
  submit.mutable_check()->set_seed(42);
  absl::StatusOr<ProbeSpec> spec = probe.Resolve(*ProbeRequestOf(submit));
  ASSERT_TRUE(spec.ok()) << spec.status();
  const v1::CheckRequest resolved = Resolved<v1::CheckRequest>(*spec);
  EXPECT_EQ(resolved.seed(), 42u);
  EXPECT_EQ(resolved.t(), 6u);
  EXPECT_EQ(resolved.variants_size(), 4);  // per-slot, union, floor, floor-distinct
  submit.mutable_check()->clear_seed();
  spec = probe.Resolve(*ProbeRequestOf(submit));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(Resolved<v1::CheckRequest>(*spec).has_seed());
}

TEST(MoeUnionProbeTest, PlanRefusesWhatTheDeviceLacksAndEstimatesTheRest) {
  const MoeUnionProbe probe{SweepLimits{}};
  CpuBackend cpu;
  v1::SweepRequest floor;
  floor.add_variants(v1::KERNEL_VARIANT_FLOOR);
  absl::StatusOr<ProbeSpec> any = probe.Resolve(Request(floor));
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(probe.Plan(**any, false, cpu).status().code(), absl::StatusCode::kUnimplemented);

  v1::SweepRequest small;
  small.mutable_geometry()->set_experts(16);
  small.mutable_geometry()->set_hidden(64);
  small.mutable_geometry()->set_ff(32);
  small.mutable_geometry()->set_selected(2);
  small.set_t_max(2);
  absl::StatusOr<ProbePlan> plan = probe.Plan(**probe.Resolve(Request(small)), false, cpu);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_GT(plan->device_seconds, 0.0);
  EXPECT_EQ(plan->artifact_bytes, 0);
  // A spec of another type came from neither this probe's Resolve nor its Open: a fault of the
  // caller's, refused.
  EXPECT_EQ(probe.Plan(v1::CheckRequest(), false, cpu).status().code(),
            absl::StatusCode::kInternal);
}

TEST(ProbeRegistryTest, AnUnknownProbeIsRefusedNamingTheServedOnes) {
  const ProbeRegistry registry = ProbeRegistry::Builtin({}).value();
  const absl::StatusOr<const Probe*> missing = registry.Get("dense-gemv");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("no probe \"dense-gemv\""));
  EXPECT_THAT(missing.status().message(), HasSubstr("moe-union"));
  ASSERT_TRUE(registry.Get("moe-union").ok());
}

TEST(ProbeRequestOfTest, SweepsAndChecksBecomeMoeUnionRequestsWithTheirLabels) {
  v1::SubmitRequest submit;
  (*submit.mutable_sweep()->mutable_labels())["commit"] = "abc";
  absl::StatusOr<v1::ProbeRequest> r = ProbeRequestOf(submit);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->probe(), "moe-union");
  EXPECT_FALSE(r->check());
  EXPECT_EQ(r->labels().at("commit"), "abc");
  v1::SweepRequest params;
  ASSERT_TRUE(r->params().UnpackTo(&params));
  EXPECT_TRUE(params.labels().empty());
  submit.mutable_check();
  EXPECT_TRUE(ProbeRequestOf(submit)->check());
  EXPECT_EQ(ProbeRequestOf(v1::SubmitRequest()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpuprobe
