// The kernel probe's parameters: defaults filled, and every bad buffer, launch and arm refused
// naming the field and the limit.
#include "server/probes/kernel/kernel_params.h"

#include <functional>
#include <string>

#include "common/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

// One arm scaling x into y: y[i] = x[i] * 2 over 1M floats.
v1::KernelParams Scale() {
  v1::KernelParams p;
  v1::KernelBuffer* x = p.add_buffers();
  x->set_name("x");
  x->set_dtype("f32");
  x->set_count(1 << 20);
  x->mutable_uniform()->set_a(-1);
  x->mutable_uniform()->set_b(1);
  v1::KernelBuffer* y = p.add_buffers();
  y->set_name("y");
  y->set_size_bytes(4 << 20);
  v1::KernelArm* arm = p.add_arms();
  arm->set_name("base");
  arm->set_bytes_read(4 << 20);
  arm->set_bytes_written(4 << 20);
  v1::KernelLaunch* l = arm->add_launches();
  l->set_module(Sha256Hex("module"));
  l->set_kernel("scale");
  l->add_grid(4096);
  l->add_block(256);
  l->add_args()->set_buffer("y");
  l->add_args()->set_buffer("x");
  v1::KernelScalar* factor = l->add_args()->mutable_scalar();
  factor->set_dtype("f32");
  factor->set_float_value(2.0);
  v1::KernelScalar* n = l->add_args()->mutable_scalar();
  n->set_dtype("i32");
  n->set_int_value(1 << 20);
  return p;
}

// The refusal of Scale() changed by `change`.
std::string Refusal(const std::function<void(v1::KernelParams&)>& change) {
  v1::KernelParams p = Scale();
  change(p);
  absl::StatusOr<v1::KernelParams> r = ResolveKernelParams(p);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  return std::string(r.status().message());
}

TEST(KernelParamsTest, DefaultsAreFilledAndSizesAreGivenBothWays) {
  absl::StatusOr<v1::KernelParams> r = ResolveKernelParams(Scale());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->reps(), 20u);
  EXPECT_EQ(r->timing(), v1::TIMING_MODE_GRAPH);
  EXPECT_EQ(r->cache(), v1::CACHE_MODE_WARM);
  EXPECT_EQ(r->order(), v1::ARM_ORDER_FIXED);
  EXPECT_EQ(r->blocks(), 1u);
  EXPECT_EQ(r->seed(), 1u);
  EXPECT_EQ(r->buffers(0).size_bytes(), 4u << 20);  // from dtype x count
  EXPECT_EQ(r->buffers(0).rotation(), 1u);
  EXPECT_TRUE(r->buffers(1).zeros());  // the default fill
  EXPECT_EQ(BufferBytes(*r), int64_t{8} << 20);
  EXPECT_THAT(ModuleIds(*r), ElementsAre(Sha256Hex("module")));
  // Resolving the resolved spec changes nothing.
  absl::StatusOr<v1::KernelParams> again = ResolveKernelParams(*r);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->SerializeAsString(), r->SerializeAsString());
}

TEST(KernelParamsTest, BadBuffersAreRefusedNamingTheField) {
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.clear_buffers(); }),
              HasSubstr("buffers: 0 buffers; 1 to 64"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.mutable_buffers(1)->set_name("x"); }),
              HasSubstr("buffers[1].name: \"x\" names two buffers"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.mutable_buffers(1)->set_name("../y"); }),
              HasSubstr("buffers[1].name: \"../y\" is not a name"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.mutable_buffers(0)->set_dtype("f8"); }),
              HasSubstr("buffers[0].dtype: \"f8\" is not one of"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.mutable_buffers(0)->set_size_bytes(4); }),
              HasSubstr("buffers[0]: size_bytes 4 is not 1048576 f32"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.mutable_buffers(1)->set_size_bytes(0); }),
              HasSubstr("buffers[1]: no size"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) {
                p.mutable_buffers(1)->set_size_bytes(uint64_t{17} << 30);
              }),
              HasSubstr("buffers[1].size_bytes: 18253611008 is more than 17179869184"));
  EXPECT_THAT(
      Refusal([](v1::KernelParams& p) { p.mutable_buffers(0)->set_count(uint64_t{5} << 30); }),
      HasSubstr("buffers[0].count: 5368709120 f32 is more than 17179869184 bytes"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) {
                p.mutable_buffers(1)->set_size_bytes(uint64_t{16} << 30);
                p.mutable_buffers(1)->set_rotation(5);
              }),
              HasSubstr("buffers: 85903540224 bytes with their rotations; at most 68719476736"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.mutable_buffers(1)->set_rotation(65); }),
              HasSubstr("buffers[1].rotation: 65 is more than 64 copies"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.mutable_buffers(1)->set_constant(1.0); }),
              HasSubstr("buffers[1].constant: needs a dtype"));
  EXPECT_THAT(
      Refusal([](v1::KernelParams& p) { p.mutable_buffers(0)->mutable_uniform()->set_b(-2); }),
      HasSubstr("buffers[0].uniform: [-1, -2) is not a range"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) {
                p.mutable_buffers(0)->set_dtype("i8");
                p.mutable_buffers(0)->set_constant(300);
              }),
              HasSubstr("buffers[0].constant: 300 is not a i8"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) {
                p.mutable_buffers(0)->set_dtype("i32");
                p.mutable_buffers(0)->mutable_normal()->set_b(1);
              }),
              HasSubstr("buffers[0].normal: needs a floating dtype"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.mutable_buffers(1)->set_copy_of("z"); }),
              HasSubstr("buffers[1].copy_of: \"z\" is no other buffer of 4194304 bytes"));
  // A copy of a buffer of its size is taken.
  v1::KernelParams copy = Scale();
  copy.mutable_buffers(1)->set_copy_of("x");
  EXPECT_TRUE(ResolveKernelParams(copy).ok());
}

TEST(KernelParamsTest, BadLaunchesAndArmsAreRefusedNamingTheField) {
  auto launch = [](v1::KernelParams& p) { return p.mutable_arms(0)->mutable_launches(0); };
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.clear_arms(); }),
              HasSubstr("arms: 0 arms; 1 to 16"));
  EXPECT_THAT(Refusal([&](v1::KernelParams& p) { launch(p)->set_module("a.cubin"); }),
              HasSubstr("arms[0].launches[0].module: \"a.cubin\" is not a module id"));
  EXPECT_THAT(Refusal([&](v1::KernelParams& p) { launch(p)->clear_kernel(); }),
              HasSubstr("arms[0].launches[0].kernel"));
  EXPECT_THAT(Refusal([&](v1::KernelParams& p) { launch(p)->clear_grid(); }),
              HasSubstr("arms[0].launches[0].grid: 0 values; 1 to 3"));
  EXPECT_THAT(Refusal([&](v1::KernelParams& p) { launch(p)->add_block(8); }),
              HasSubstr("arms[0].launches[0].block: 2048 threads is more than 1024"));
  EXPECT_THAT(Refusal([&](v1::KernelParams& p) { launch(p)->add_grid(70000); }),
              HasSubstr("arms[0].launches[0].grid: y = 70000 is outside [1, 65535]"));
  EXPECT_THAT(Refusal([&](v1::KernelParams& p) { launch(p)->set_shared_bytes(300000); }),
              HasSubstr("arms[0].launches[0].shared_bytes: 300000 is more than 232448"));
  EXPECT_THAT(Refusal([&](v1::KernelParams& p) { launch(p)->add_cluster(3); }),
              HasSubstr("arms[0].launches[0].cluster: grid x = 4096 is not a multiple of 3"));
  EXPECT_THAT(Refusal([&](v1::KernelParams& p) { launch(p)->mutable_args(0)->set_buffer("w"); }),
              HasSubstr("arms[0].launches[0].args[0].buffer: \"w\" names no buffer"));
  EXPECT_THAT(
      Refusal([&](v1::KernelParams& p) { launch(p)->mutable_args(1)->set_offset_bytes(4 << 20); }),
      HasSubstr("args[1].offset_bytes: 4194304 is not inside x's 4194304 bytes"));
  EXPECT_THAT(Refusal([&](v1::KernelParams& p) {
                launch(p)->mutable_args(3)->mutable_scalar()->set_int_value(int64_t{1} << 40);
              }),
              HasSubstr("args[3].scalar: 1099511627776 is outside i32's range"));
  EXPECT_THAT(Refusal([&](v1::KernelParams& p) {
                launch(p)->mutable_args(2)->mutable_scalar()->set_int_value(2);
              }),
              HasSubstr("args[2].scalar: a f32 takes float_value"));
  EXPECT_THAT(Refusal([&](v1::KernelParams& p) { launch(p)->add_args(); }),
              HasSubstr("args[4]: neither a buffer nor a scalar"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { *p.add_arms() = p.arms(0); }),
              HasSubstr("arms[1].name: \"base\" names two arms"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.mutable_arms(0)->set_baseline("base"); }),
              HasSubstr("arms[0].baseline: \"base\" names no other arm"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.set_reps(1); }), HasSubstr("reps"));
  // A candidate against its baseline, from another module.
  v1::KernelParams pair = Scale();
  v1::KernelArm* candidate = pair.add_arms();
  *candidate = pair.arms(0);
  candidate->set_name("candidate");
  candidate->set_baseline("base");
  candidate->mutable_launches(0)->set_module(Sha256Hex("other module"));
  absl::StatusOr<v1::KernelParams> r = ResolveKernelParams(pair);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ModuleIds(*r), ElementsAre(Sha256Hex("module"), Sha256Hex("other module")));
}

TEST(KernelParamsTest, TheCheckHasAReferenceArmAndATolerance) {
  v1::KernelParams p = Scale();
  p.mutable_arms(0)->add_outputs("y");
  absl::StatusOr<v1::KernelParams> r = ResolveKernelParams(p);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->reference(), "base");  // the first arm
  EXPECT_TRUE(r->tolerance().bitwise());
  EXPECT_DOUBLE_EQ(r->max_launch_seconds(), 1.0);
  EXPECT_DOUBLE_EQ(r->threshold(), 0.01);
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.mutable_arms(0)->add_outputs("z"); }),
              HasSubstr("arms[0].outputs[0]: \"z\" names no buffer"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) {
                p.mutable_arms(0)->add_outputs("y");
                p.mutable_arms(0)->add_outputs("y");
              }),
              HasSubstr("arms[0].outputs[1]: \"y\" is named twice"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.set_reference("nobody"); }),
              HasSubstr("reference: \"nobody\" names no arm"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.set_verify(true); }),
              HasSubstr("verify: no arm declares outputs to check"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.mutable_tolerance()->set_rel(-1); }),
              HasSubstr("tolerance.rel: -1 is not a tolerance"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) {
                p.mutable_arms(0)->add_outputs("y");
                p.mutable_tolerance()->set_abs(1e-3);
              }),
              HasSubstr("tolerance: output y has no dtype"));
  // A candidate's outputs must be the reference's to be compared.
  EXPECT_THAT(Refusal([](v1::KernelParams& p) {
                v1::KernelArm* c = p.add_arms();
                *c = p.arms(0);
                c->set_name("candidate");
                c->add_outputs("x");
              }),
              HasSubstr("arms[1].outputs[0]: x is not an output of the reference arm base"));
  EXPECT_THAT(Refusal([](v1::KernelParams& p) { p.set_max_launch_seconds(120); }),
              HasSubstr("max_launch_seconds"));
}

TEST(KernelParamsTest, RotationsMustShareAShortPeriod) {
  v1::KernelParams p = Scale();
  p.mutable_buffers(0)->set_rotation(4);
  p.mutable_buffers(1)->set_rotation(2);
  absl::StatusOr<v1::KernelParams> r = ResolveKernelParams(p);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(RotationPeriod(*r), 4);
  EXPECT_EQ(BufferBytes(*r), int64_t{24} << 20);
  EXPECT_THAT(Refusal([](v1::KernelParams& p) {
                p.mutable_buffers(0)->set_rotation(63);
                p.mutable_buffers(1)->set_rotation(64);
              }),
              HasSubstr("least common multiple is 4032"));
}

TEST(KernelParamsTest, AJobNamesAtMostEightModules) {
  EXPECT_THAT(Refusal([](v1::KernelParams& p) {
                for (int i = 0; i < 8; ++i) {
                  v1::KernelArm* arm = p.add_arms();
                  *arm = p.arms(0);
                  arm->set_name("arm" + std::to_string(i));
                  arm->mutable_launches(0)->set_module(Sha256Hex(std::to_string(i)));
                }
              }),
              HasSubstr("arms: the launches name 9 modules; at most 8"));
}

}  // namespace
}  // namespace gpuprobe
