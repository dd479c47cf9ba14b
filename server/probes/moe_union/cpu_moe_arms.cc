// The moe-union kernels on the cpu: the float64 references on host memory.
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "kernels/moe_banks.h"
#include "kernels/moe_reference.h"
#include "server/probes/moe_union/moe_arms.h"

namespace gpuprobe {
namespace {

class CpuArms final : public MoeArms {
 public:
  absl::Status LoadBanks(const MoeGeometry& geometry, uint64_t seed) override {
    if (banks_ && banks_->geometry == geometry && seed_ == seed) return absl::OkStatus();
    arms_.Clear();
    banks_.reset();
    ASSIGN_OR_RETURN(MoeBanks banks, SynthesizeBanks(geometry, seed));
    banks_ = std::make_unique<MoeBanks>(std::move(banks));
    seed_ = seed;
    return absl::OkStatus();
  }

  absl::Status PlaceBanks() override {
    if (!banks_) return absl::FailedPreconditionError("PlaceBanks before LoadBanks");
    arms_.Clear();
    banks_ = std::make_unique<MoeBanks>(*banks_);  // fresh heap memory, then the old is freed
    return absl::OkStatus();
  }

  absl::StatusOr<ArmHandle> PrepareArm(const ArmInputs& inputs) override {
    if (!banks_) return absl::FailedPreconditionError("PrepareArm before LoadBanks");
    RETURN_IF_ERROR(CheckMoeVariant("cpu", inputs.variant));
    const MoeGeometry& g = banks_->geometry;
    const size_t slots = inputs.sel.size();
    auto arm = std::make_unique<Arm>();
    arm->inputs = inputs;
    arm->gu_out.resize(slots * g.ff);
    arm->down_out.resize(slots * g.hidden);
    return arms_.Add(std::move(arm), banks_.get());
  }

  absl::StatusOr<DeviceLaunch*> Launch(ArmHandle handle, MoeKernel kernel) override {
    return arms_.Launch(handle, kernel);
  }

  absl::StatusOr<LaunchOutput> RunOnce(ArmHandle handle, MoeKernel kernel) override {
    ASSIGN_OR_RETURN(Arm * arm, arms_.Find(handle));
    std::vector<double>& out = kernel == MoeKernel::kGateUpSilu ? arm->gu_out : arm->down_out;
    std::fill(out.begin(), out.end(), std::numeric_limits<double>::quiet_NaN());
    RETURN_IF_ERROR((kernel == MoeKernel::kGateUpSilu ? arm->gate_up : arm->down).Enqueue(nullptr));
    return LaunchOutput{.values = std::vector<float>(out.begin(), out.end())};
  }

  void ReleaseArms() override { arms_.Clear(); }

 private:
  struct Arm;

  // One kernel of one arm: the reference, run on the calling thread.
  struct KernelLaunch final : DeviceLaunch {
    const MoeBanks* banks = nullptr;
    Arm* arm = nullptr;
    MoeKernel kernel = MoeKernel::kGateUpSilu;

    absl::Status Enqueue(DeviceStream) override;
  };

  struct Arm {
    ArmInputs inputs;
    std::vector<double> gu_out;
    std::vector<double> down_out;
    KernelLaunch gate_up, down;
  };

  std::optional<uint64_t> seed_;
  std::unique_ptr<MoeBanks> banks_;
  ArmTable<Arm> arms_;
};

absl::Status CpuArms::KernelLaunch::Enqueue(DeviceStream) {
  if (kernel == MoeKernel::kGateUpSilu) {
    return SelGuSiluReference(*banks, arm->inputs.x, arm->inputs.sel, absl::MakeSpan(arm->gu_out));
  }
  return SelDownReference(*banks, arm->inputs.h, arm->inputs.sel, absl::MakeSpan(arm->down_out));
}

}  // namespace

std::unique_ptr<MoeArms> CpuMoeArms() { return std::make_unique<CpuArms>(); }

}  // namespace gpuprobe
