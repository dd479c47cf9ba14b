#include "server/probes/moe_union/exactness.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "kernels/expert_checksum.h"
#include "kernels/moe_banks.h"
#include "kernels/moe_reference.h"
#include "server/artifacts/npy_writer.h"
#include "server/probes/moe_union/sweep_runner.h"

namespace gpuprobe {
namespace {

absl::Status DumpBanks(const std::string& dir, const MoeBanks& b) {
  const MoeGeometry& g = b.geometry;
  const int64_t e = g.experts, ff2 = 2 * int64_t{g.ff}, h = g.hidden, ff = g.ff;
  RETURN_IF_ERROR(WriteNpy(dir + "/gate_up_codes.npy", b.gate_up.codes.data(), {e, ff2, h / 2}));
  RETURN_IF_ERROR(WriteNpy(dir + "/gate_up_scales.npy", b.gate_up.scales.data(), {e, ff2, h / 16}));
  RETURN_IF_ERROR(WriteNpy(dir + "/gate_global.npy", b.gate_global.data(), {e}));
  RETURN_IF_ERROR(WriteNpy(dir + "/up_global.npy", b.up_global.data(), {e}));
  RETURN_IF_ERROR(WriteNpy(dir + "/down_codes.npy", b.down.codes.data(), {e, h, ff / 2}));
  RETURN_IF_ERROR(WriteNpy(dir + "/down_scales.npy", b.down.scales.data(), {e, h, ff / 16}));
  return WriteNpy(dir + "/down_global.npy", b.down_global.data(), {e});
}

std::string ArmTag(const Arm& arm) {
  return absl::StrFormat("%s_t%d_u%d", VariantName(arm.variant), arm.t, arm.union_size);
}

absl::Status DumpArm(const std::string& dir, const MoeGeometry& g, const Arm& arm,
                     const ArmInputs& in) {
  const std::string tag = ArmTag(arm);
  RETURN_IF_ERROR(WriteNpy(dir + "/" + tag + "_sel.npy", in.sel.data(), {arm.slots}));
  RETURN_IF_ERROR(WriteNpy(dir + "/" + tag + "_x.npy", in.x.data(), {arm.t, g.hidden}));
  return WriteNpy(dir + "/" + tag + "_h_in.npy", in.h.data(), {arm.slots, g.ff});
}

KernelCheckResult Judge(const Arm& arm, std::string kernel, const std::vector<float>& out,
                        const std::vector<double>& ref) {
  KernelCheckResult r{.arm = arm, .kernel = std::move(kernel)};
  r.error = CompareWithReference(out, ref);
  r.passed = r.error.unwritten == 0 && r.error.max_rel <= kExactnessTolerance &&
             r.error.norm_rel <= kNormTolerance;
  return r;
}

}  // namespace

ErrorStats CompareWithReference(absl::Span<const float> out, absl::Span<const double> ref) {
  double ref_max = 0.0;
  for (double v : ref) ref_max = std::max(ref_max, std::abs(v));
  const double floor = std::max(kRelErrorFloor * ref_max, 1e-300);
  ErrorStats s;
  double sum = 0.0, diff_sq = 0.0, ref_sq = 0.0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) {
      ++s.unwritten;
      continue;
    }
    const double diff = std::abs(out[i] - ref[i]);
    const double rel = diff / std::max(std::abs(ref[i]), floor);
    s.max_rel = std::max(s.max_rel, rel);
    sum += rel;
    diff_sq += diff * diff;
    ref_sq += ref[i] * ref[i];
  }
  s.mean_rel = out.empty() ? 0.0 : sum / static_cast<double>(out.size());
  s.norm_rel = ref_sq > 0.0 ? std::sqrt(diff_sq / ref_sq) : std::sqrt(diff_sq);
  return s;
}

int64_t EstimateDumpBytes(const SweepSpec& spec) {
  const MoeGeometry& g = spec.geometry;
  // The banks: 7 files, every expert.
  int64_t bytes = BankBytes(g) + 7 * kNpyHeaderBytes;
  for (const Arm& arm : ExpandArms(spec)) {
    // sel, x and h_in; h_out and y_out for the sel kernels.
    bytes += 4 * (int64_t{arm.slots} + int64_t{arm.t} * g.hidden + int64_t{arm.slots} * g.ff) +
             3 * kNpyHeaderBytes;
    if (!IsFloor(arm.variant)) {
      bytes += 4 * int64_t{arm.slots} * (g.ff + g.hidden) + 2 * kNpyHeaderBytes;
    }
  }
  return bytes;
}

absl::StatusOr<std::vector<KernelCheckResult>> RunExactnessCheck(
    const SweepSpec& spec, const std::string& dump_dir, Backend& backend, CheckObserver& observer,
    const std::atomic<bool>& cancelled) {
  ASSIGN_OR_RETURN(MoeArms * arms, MoeArmsOn(backend));
  return RunExactnessCheck(spec, dump_dir, backend, *arms, observer, cancelled);
}

absl::StatusOr<std::vector<KernelCheckResult>> RunExactnessCheck(
    const SweepSpec& spec, const std::string& dump_dir, Backend& backend, MoeArms& device_code,
    CheckObserver& observer, const std::atomic<bool>& cancelled) {
  RETURN_IF_ERROR(CheckFitsBackend(spec, backend));
  const MoeGeometry& g = spec.geometry;
  ASSIGN_OR_RETURN(const MoeBanks banks, SynthesizeBanks(g, spec.seed));
  if (!dump_dir.empty()) RETURN_IF_ERROR(DumpBanks(dump_dir, banks));
  RETURN_IF_ERROR(device_code.LoadBanks(g, spec.seed));
  // On banks placed as a timed block's are (at a drawn offset into fresh memory), so that the
  // check covers what sweeps measure.
  RETURN_IF_ERROR(device_code.PlaceBanks());

  std::vector<KernelCheckResult> results;
  auto report = [&](KernelCheckResult r) {
    observer.OnCheck(r);
    results.push_back(std::move(r));
  };
  for (const Arm& arm : ExpandArms(spec)) {
    if (cancelled.load()) return absl::CancelledError("exactness check cancelled");
    ASSIGN_OR_RETURN(ArmInputs in, MakeArmInputs(spec, arm));
    ASSIGN_OR_RETURN(ArmHandle handle, device_code.PrepareArm(in));
    if (!dump_dir.empty()) RETURN_IF_ERROR(DumpArm(dump_dir, g, arm, in));
    const std::string prefix = dump_dir.empty() ? "" : dump_dir + "/" + ArmTag(arm);

    if (IsFloor(arm.variant)) {
      for (MoeKernel kernel : {MoeKernel::kGateUpSilu, MoeKernel::kDown}) {
        ASSIGN_OR_RETURN(LaunchOutput out, device_code.RunOnce(handle, kernel));
        const Nvfp4Bank& bank = kernel == MoeKernel::kGateUpSilu ? banks.gate_up : banks.down;
        const uint32_t want = ExpertBytesChecksum(bank, FloorExperts(arm.variant, in.sel));
        KernelCheckResult r{
            .arm = arm,
            .kernel = kernel == MoeKernel::kGateUpSilu ? "read_floor_gu" : "read_floor_down"};
        r.passed = out.checksum.has_value() && *out.checksum == want;
        r.detail =
            absl::StrFormat("checksum 0x%08x, expected 0x%08x", out.checksum.value_or(0), want);
        report(std::move(r));
      }
      continue;
    }

    ASSIGN_OR_RETURN(LaunchOutput gu, device_code.RunOnce(handle, MoeKernel::kGateUpSilu));
    std::vector<double> h_ref(static_cast<size_t>(arm.slots) * g.ff);
    RETURN_IF_ERROR(SelGuSiluReference(banks, in.x, in.sel, absl::MakeSpan(h_ref)));
    report(Judge(arm, "sel_gu_silu", gu.values, h_ref));

    ASSIGN_OR_RETURN(LaunchOutput down, device_code.RunOnce(handle, MoeKernel::kDown));
    std::vector<double> y_ref(static_cast<size_t>(arm.slots) * g.hidden);
    RETURN_IF_ERROR(SelDownReference(banks, in.h, in.sel, absl::MakeSpan(y_ref)));
    report(Judge(arm, "sel_down", down.values, y_ref));

    if (!dump_dir.empty()) {
      RETURN_IF_ERROR(WriteNpy(prefix + "_h_out.npy", gu.values.data(), {arm.slots, g.ff}));
      RETURN_IF_ERROR(WriteNpy(prefix + "_y_out.npy", down.values.data(), {arm.slots, g.hidden}));
    }
  }
  device_code.ReleaseArms();
  return results;
}

}  // namespace gpuprobe
