#include "server/device/cpu_backend.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "kernels/moe_reference.h"

namespace gpuprobe {
namespace {

// Half the host's physical memory: the rest stays for the daemon, the OS and other work.
int64_t HostCapacityBytes() {
  const int64_t pages = sysconf(_SC_PHYS_PAGES);
  const int64_t page_bytes = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_bytes > 0 ? pages * page_bytes / 2 : int64_t{4} << 30;
}

// Twice the last-level cache; 64 MiB where the OS does not say.
size_t FlushBytes() {
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  const long llc = l3 > 0 ? l3 : l2;
  return llc > 0 ? 2 * static_cast<size_t>(llc) : size_t{64} << 20;
}

}  // namespace

CpuBackend::CpuBackend(int repeat)
    : repeat_(std::max(1, repeat)), capacity_bytes_(HostCapacityBytes()) {}

std::string CpuBackend::Description() const {
  if (repeat_ == 1) return "cpu (reference kernels)";
  return absl::StrFormat("cpu (reference kernels, each run %dx)", repeat_);
}

absl::Status CpuBackend::CheckVariant(KernelVariant variant) const {
  if (variant != KernelVariant::kPerSlot) {
    return absl::UnimplementedError(absl::StrFormat(
        "variant: the cpu backend runs only per-slot kernels, not %s", VariantName(variant)));
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::LoadBanks(const MoeGeometry& geometry, uint64_t seed) {
  if (banks_ && banks_->geometry == geometry && seed_ == seed) return absl::OkStatus();
  arms_.clear();
  banks_.reset();
  ASSIGN_OR_RETURN(MoeBanks banks, SynthesizeBanks(geometry, seed));
  banks_ = std::make_unique<MoeBanks>(std::move(banks));
  seed_ = seed;
  return absl::OkStatus();
}

absl::StatusOr<ArmHandle> CpuBackend::PrepareArm(const ArmInputs& inputs) {
  if (!banks_) return absl::FailedPreconditionError("PrepareArm before LoadBanks");
  RETURN_IF_ERROR(CheckVariant(inputs.variant));
  const MoeGeometry& g = banks_->geometry;
  const size_t slots = inputs.sel.size();
  PreparedArm arm{.inputs = inputs,
                  .gu_out = std::vector<double>(slots * g.ff),
                  .down_out = std::vector<double>(slots * g.hidden)};
  arms_.push_back(std::move(arm));
  return static_cast<ArmHandle>(arms_.size() - 1);
}

absl::Status CpuBackend::Launch(PreparedArm& arm, MoeKernel kernel) {
  if (kernel == MoeKernel::kGateUpSilu) {
    return SelGuSiluReference(*banks_, arm.inputs.x, arm.inputs.sel, absl::MakeSpan(arm.gu_out));
  }
  return SelDownReference(*banks_, arm.inputs.h, arm.inputs.sel, absl::MakeSpan(arm.down_out));
}

void CpuBackend::FlushCache() {
  if (flush_buffer_.empty()) flush_buffer_.resize(FlushBytes());
  for (size_t i = 0; i < flush_buffer_.size(); i += 64) ++flush_buffer_[i];
}

absl::StatusOr<CpuBackend::PreparedArm*> CpuBackend::Find(ArmHandle handle) {
  if (handle < 0 || handle >= static_cast<int>(arms_.size())) {
    return absl::InvalidArgumentError(absl::StrFormat("no prepared arm %d", handle));
  }
  return &arms_[handle];
}

absl::StatusOr<LaunchOutput> CpuBackend::RunOnce(ArmHandle handle, MoeKernel kernel) {
  ASSIGN_OR_RETURN(PreparedArm * arm, Find(handle));
  std::vector<double>& out = kernel == MoeKernel::kGateUpSilu ? arm->gu_out : arm->down_out;
  std::fill(out.begin(), out.end(), std::numeric_limits<double>::quiet_NaN());
  RETURN_IF_ERROR(Launch(*arm, kernel));
  return LaunchOutput{.values = std::vector<float>(out.begin(), out.end())};
}

DeviceDetails CpuBackend::Details() const {
  return DeviceDetails{.name = Description(), .memory_bytes = capacity_bytes_};
}

template <typename Run>
absl::StatusOr<double> CpuBackend::TimeHost(const TimingOptions& options, const Run& run) {
  const int launches = options.timing == TimingMode::kGraph ? options.graph_launches : 1;
  // The host has no launch overhead to amortise, so a graph sample is the mean of `launches`
  // individually timed calls; that keeps each cold call's flush outside its timed region.
  double total_us = 0.0;
  for (int i = 0; i < launches; ++i) {
    if (options.cache == CacheMode::kCold) FlushCache();
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < repeat_; ++r) RETURN_IF_ERROR(run());
    const auto stop = std::chrono::steady_clock::now();
    total_us += std::chrono::duration<double, std::micro>(stop - start).count();
  }
  return total_us / launches;
}

absl::StatusOr<double> CpuBackend::TimeLaunch(ArmHandle handle, MoeKernel kernel,
                                              const TimingOptions& options) {
  ASSIGN_OR_RETURN(PreparedArm * arm, Find(handle));
  return TimeHost(options, [&] { return Launch(*arm, kernel); });
}

absl::StatusOr<double> CpuBackend::Time(DeviceLaunch& launch, const TimingOptions& options) {
  return TimeHost(options, [&] { return launch.Enqueue(nullptr); });
}

}  // namespace gpuprobe
