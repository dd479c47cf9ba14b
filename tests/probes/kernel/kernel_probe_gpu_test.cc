// GPU tests (ctest label `gpu`) of the kernel probe in process, on modules nvcc built from
// tests/testdata/modules/probe_kernels.cu: a correct kernel timed and checked (its cubin against
// its PTX, JIT-compiled); a wrong build caught by the check; arguments that do not match the
// kernel refused before any launch; a missing kernel named with the module's list; identical
// machine code in two different cubins recognised; an illegal address failing the job with the
// CUDA error named (last: it leaves this process's context unusable, and ctest runs each case
// in a process of its own); and, through a device worker, a kernel that never ends killed at its
// bound with the next job running fine. Skipped where no CUDA device is visible.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "absl/time/clock.h"
#include "common/module_inspection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/jobs/worker_process.h"
#include "server/probes/kernel/kernel_probe.h"
#include "tests/device/cuda_device_test.h"
#include "tests/probes/recorded_events.h"

namespace gpuprobe {
namespace {

using ::testing::HasSubstr;

// The build's test modules, or $TEST_MODULES_DIR's (a bundle's tests/modules).
std::string ModuleBytes(const std::string& file) {
  const char* dir = std::getenv("TEST_MODULES_DIR");
  std::ifstream in(std::string(dir != nullptr ? dir : TEST_MODULES_DIR) + "/" + file,
                   std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class KernelProbeGpuTest : public CudaDeviceTest {
 protected:
  // The module of `file`: its id, its bytes kept for the run.
  std::string Module(const std::string& file) {
    const std::string bytes = ModuleBytes(file);
    absl::StatusOr<v1::Module> m = InspectModule(bytes);
    EXPECT_TRUE(m.ok()) << file << ": " << m.status();
    modules_[m->id()] = bytes;
    return m->id();
  }

  // An arm of copy_scale (y = 2 x over n floats) from module `id`.
  static void AddCopyScale(v1::KernelParams& p, const std::string& name, const std::string& id,
                           int args = 4) {
    v1::KernelArm* arm = p.add_arms();
    arm->set_name(name);
    arm->add_outputs("y");
    arm->set_bytes_read(4 << 20);
    arm->set_bytes_written(4 << 20);
    v1::KernelLaunch* l = arm->add_launches();
    l->set_module(id);
    l->set_kernel("copy_scale");
    l->add_grid(4096);
    l->add_block(256);
    l->add_args()->set_buffer("y");
    l->add_args()->set_buffer("x");
    v1::KernelScalar* factor = l->add_args()->mutable_scalar();
    factor->set_dtype("f32");
    factor->set_float_value(2.0);
    if (args == 4) {
      v1::KernelScalar* n = l->add_args()->mutable_scalar();
      n->set_dtype("i32");
      n->set_int_value(1 << 20);
    }
  }

  static v1::KernelParams Buffers() {
    v1::KernelParams p;
    v1::KernelBuffer* x = p.add_buffers();
    x->set_name("x");
    x->set_dtype("f32");
    x->set_count(1 << 20);
    x->mutable_normal()->set_a(0);
    x->mutable_normal()->set_b(1);
    x->set_rotation(2);
    v1::KernelBuffer* y = p.add_buffers();
    y->set_name("y");
    y->set_dtype("f32");
    y->set_count(1 << 20);
    p.set_reps(12);
    return p;
  }

  JobOutcome Run(const v1::KernelParams& p, bool check, RecordedEvents& recorded) {
    const KernelProbe probe;
    v1::ProbeRequest request;
    request.set_probe("kernel");
    request.mutable_params()->PackFrom(p);
    absl::StatusOr<ProbeSpec> spec = probe.Resolve(request);
    EXPECT_TRUE(spec.ok()) << spec.status();
    if (!spec.ok()) return JobOutcome{.status = spec.status()};
    absl::StatusOr<ProbePlan> plan = probe.Plan(**spec, check, *backend_);
    EXPECT_TRUE(plan.ok()) << plan.status();
    const std::atomic<bool> cancelled{false};
    return probe.Run({.job_id = "job-1", .spec = *spec, .check = check, .modules = modules_},
                     *backend_, recorded.Publisher(), cancelled);
  }

  static std::string Code(const v1::Result& r) {
    for (const v1::AxisValue& a : r.axes()) {
      if (a.name() == "code_sha256") return a.text_value();
    }
    return "";
  }

  std::map<std::string, std::string> modules_;
};

TEST_F(KernelProbeGpuTest, ACorrectKernelIsCheckedAgainstItsPtxAndTimed) {
  v1::KernelParams p = Buffers();
  AddCopyScale(p, "cubin", Module("probe_kernels.cubin"));
  AddCopyScale(p, "ptx", Module("probe_kernels.ptx"));
  AddCopyScale(p, "fatbin", Module("probe_kernels.fatbin"));
  p.mutable_arms(1)->set_baseline("cubin");
  RecordedEvents checked;
  const JobOutcome check = Run(p, /*check=*/true, checked);
  ASSERT_TRUE(check.status.ok()) << check.status;
  ASSERT_EQ(checked.Checks().size(), 2u);
  for (const v1::KernelCheck& c : checked.Checks()) {
    EXPECT_TRUE(c.passed()) << c.detail();
    EXPECT_THAT(c.detail(), HasSubstr("all 4194304 bytes equal"));
  }
  RecordedEvents timed;
  p.set_verify(true);
  const JobOutcome outcome = Run(p, /*check=*/false, timed);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  const std::vector<v1::Result> results = timed.Results();
  ASSERT_EQ(results.size(), 3u);
  for (const v1::Result& r : results) {
    EXPECT_GT(r.metrics(0).median(), 0.5);  // 8 MB moved: microseconds, not nothing
    EXPECT_EQ(r.impossible(), "") << r.impossible();
    EXPECT_EQ(Code(r).size(), 64u);
  }
  EXPECT_NE(results[1].verdict(), v1::VERDICT_UNSPECIFIED);  // the PTX arm against the cubin
}

TEST_F(KernelProbeGpuTest, AWrongBuildIsCaughtByTheCheck) {
  v1::KernelParams p = Buffers();
  AddCopyScale(p, "base", Module("probe_kernels.cubin"));
  AddCopyScale(p, "wrong", Module("probe_kernels_wrong.cubin"));
  p.mutable_tolerance()->set_rel(1e-6);
  RecordedEvents recorded;
  const JobOutcome outcome = Run(p, /*check=*/true, recorded);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kDataLoss) << outcome.status;
  ASSERT_EQ(recorded.Checks().size(), 1u);
  EXPECT_FALSE(recorded.Checks()[0].passed());
  EXPECT_THAT(recorded.Checks()[0].detail(), HasSubstr("1 of 1048576 elements out of tolerance, "
                                                       "the first at element 1000"));
}

TEST_F(KernelProbeGpuTest, ArgumentsThatDoNotMatchTheKernelAreRefused) {
  v1::KernelParams p = Buffers();
  AddCopyScale(p, "short", Module("probe_kernels.cubin"), /*args=*/3);
  RecordedEvents recorded;
  const JobOutcome outcome = Run(p, false, recorded);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(outcome.status.message(),
              HasSubstr("arms[0].launches[0].args: 3 arguments, but kernel copy_scale takes 4"));
  EXPECT_TRUE(recorded.Results().empty());
  v1::KernelParams missing = Buffers();
  AddCopyScale(missing, "missing", Module("probe_kernels.cubin"));
  missing.mutable_arms(0)->mutable_launches(0)->set_kernel("copy_scal");
  const JobOutcome named = Run(missing, false, recorded);
  EXPECT_EQ(named.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(named.status.message(), HasSubstr("has no kernel \"copy_scal\"; it has"));
  EXPECT_THAT(named.status.message(), HasSubstr("copy_scale"));
}

TEST_F(KernelProbeGpuTest, IdenticalMachineCodeInTwoCubinsIsRecognised) {
  v1::KernelParams p = Buffers();
  const std::string plain = Module("probe_kernels.cubin");
  const std::string extra = Module("probe_kernels_extra.cubin");
  ASSERT_NE(plain, extra);  // different bytes, different modules
  AddCopyScale(p, "base", plain);
  AddCopyScale(p, "candidate", extra);
  AddCopyScale(p, "wrong", Module("probe_kernels_wrong.cubin"));
  p.mutable_arms(1)->set_baseline("base");
  p.set_blocks(3);  // each on buffers placed anew, with launches captured anew
  RecordedEvents recorded;
  ASSERT_TRUE(Run(p, false, recorded).status.ok());
  const std::vector<v1::Result> results = recorded.Results();
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(Code(results[0]), Code(results[1]));
  EXPECT_NE(Code(results[0]), Code(results[2]));
}

// Through a device worker, as the daemon runs it: the job that never ends is killed at its
// silence bound and fails saying so; the next job, in a fresh worker, succeeds.
TEST_F(KernelProbeGpuTest, AKernelThatNeverEndsHasItsWorkerKilledAndTheNextJobRuns) {
  const char* daemon = std::getenv("GPUPROBED");  // a bundle's bin/gpuprobed
  absl::StatusOr<std::unique_ptr<WorkerProcessExecutor>> worker = WorkerProcessExecutor::Start(
      daemon != nullptr ? daemon : GPUPROBED_PATH, {"--backend=cuda", "--device=0"});
  ASSERT_TRUE(worker.ok()) << worker.status();
  const KernelProbe probe;
  auto job = [&](const v1::KernelParams& p) {
    v1::ProbeRequest request;
    request.set_probe("kernel");
    request.mutable_params()->PackFrom(p);
    JobRun run{.probe = &probe};
    absl::StatusOr<ProbeSpec> spec = probe.Resolve(request);
    EXPECT_TRUE(spec.ok()) << spec.status();
    run.run = {.job_id = "job-1", .spec = *spec, .modules = modules_};
    run.watchdog = absl::Seconds(probe.Plan(**spec, false, *backend_)->silence_seconds);
    RecordedEvents recorded;
    const std::atomic<bool> cancelled{false};
    const absl::Time start = absl::Now();
    JobOutcome outcome = (*worker)->Run(run, recorded.Publisher(), cancelled);
    return std::pair(outcome, absl::Now() - start);
  };
  v1::KernelParams hang = Buffers();
  hang.set_max_launch_seconds(0.2);
  hang.set_timing(v1::TIMING_MODE_EVENTS);
  v1::KernelArm* arm = hang.add_arms();
  arm->set_name("hang");
  v1::KernelLaunch* l = arm->add_launches();
  l->set_module(Module("probe_kernels.cubin"));
  l->set_kernel("hang");
  l->add_grid(1);
  l->add_block(1);
  l->add_args()->set_buffer("y");  // zeros: the flag never set
  const auto [killed, after] = job(hang);
  EXPECT_EQ(killed.status.code(), absl::StatusCode::kAborted) << killed.status;
  EXPECT_THAT(killed.status.message(), HasSubstr("it was killed and restarted"));
  // Its bound: 10 s of setup, the placement, one rep's launch at 0.2 s; and the kill.
  EXPECT_LT(absl::ToDoubleSeconds(after), 30.0);
  v1::KernelParams clean = Buffers();
  AddCopyScale(clean, "copy", Module("probe_kernels.cubin"));
  const auto [next, took] = job(clean);
  EXPECT_TRUE(next.status.ok()) << next.status;
  EXPECT_EQ(next.results, 1);
  std::cout << "hang: failed after " << absl::ToDoubleSeconds(after) << " s; the next job took "
            << absl::ToDoubleSeconds(took) << " s\n";
}

// Last in the file: the context is unusable afterwards.
TEST_F(KernelProbeGpuTest, AnIllegalAddressFailsTheJobNamingTheCudaError) {
  v1::KernelParams p = Buffers();
  v1::KernelArm* arm = p.add_arms();
  arm->set_name("illegal");
  v1::KernelLaunch* l = arm->add_launches();
  l->set_module(Module("probe_kernels.cubin"));
  l->set_kernel("illegal_write");
  l->add_grid(1);
  l->add_block(1);
  l->add_args()->set_buffer("y");
  RecordedEvents recorded;
  const JobOutcome outcome = Run(p, false, recorded);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInternal) << outcome.status;
  EXPECT_THAT(outcome.status.message(), HasSubstr("illegal"));
}

}  // namespace
}  // namespace gpuprobe
