// The moe-union kernels on cuda: the NVFP4 sel kernels (per-slot and union-gather plans) and
// the pure-read floor, on banks kept resident across jobs (each block of a sweep moves them to
// fresh memory).
#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "kernels/cuda_status.h"
#include "kernels/moe_banks.h"
#include "kernels/moe_sel_kernels.h"
#include "kernels/read_floor.h"
#include "kernels/slot_groups.h"
#include "server/device/device_buffer.h"
#include "server/probes/moe_union/moe_arms.h"

namespace gpuprobe {
namespace {

// One NVFP4 tensor of all experts, twice: in the checkpoint's layout, which the floor kernel
// reads (its checksum is the checkpoint bytes'), and in the sel kernels' layout
// (kernels/nvfp4_pack.h), written from the first on the device once per bank. Same bytes per
// expert, same places.
struct DeviceBank {
  DeviceBuffer codes, scales, sel_codes, sel_scales;
  int experts = 0, rows = 0, cols = 0;

  DeviceNvfp4Bank View(bool sel_layout) const {
    return {(sel_layout ? sel_codes : codes).get<uint8_t>(),
            (sel_layout ? sel_scales : scales).get<uint8_t>(), experts, rows, cols};
  }

  static absl::StatusOr<DeviceBank> Upload(const Nvfp4Bank& host, int experts, SelBank kind,
                                           cudaStream_t stream) {
    DeviceBank bank;
    bank.experts = experts;
    bank.rows = static_cast<int>(host.rows);
    bank.cols = static_cast<int>(host.cols);
    ASSIGN_OR_RETURN(bank.codes, DeviceBuffer::FromHost(host.codes));
    ASSIGN_OR_RETURN(bank.scales, DeviceBuffer::FromHost(host.scales));
    ASSIGN_OR_RETURN(bank.sel_codes, DeviceBuffer::Allocate(bank.codes.bytes()));
    ASSIGN_OR_RETURN(bank.sel_scales, DeviceBuffer::Allocate(bank.scales.bytes()));
    RETURN_IF_ERROR(LaunchToSelLayout(bank.View(false), kind, bank.sel_codes.get<uint8_t>(),
                                      bank.sel_scales.get<uint8_t>(), stream));
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    return bank;
  }

  // The same bytes in fresh memory, each tensor `draw()` bytes into its new allocation.
  absl::Status Move(const std::function<int64_t()>& draw, cudaStream_t stream) {
    for (DeviceBuffer* buffer : {&codes, &scales, &sel_codes, &sel_scales}) {
      ASSIGN_OR_RETURN(*buffer, DeviceBuffer::CopyOf(*buffer, draw(), stream));
    }
    return absl::OkStatus();
  }
};

struct Banks {
  MoeGeometry geometry;
  uint64_t seed = 0;
  DeviceBank gate_up, down;
  DeviceBuffer gate_global, up_global, down_global;
};

struct Arm;

// One kernel of one arm, enqueued on the device's stream.
struct KernelLaunch final : DeviceLaunch {
  const Banks* banks = nullptr;
  const Arm* arm = nullptr;
  MoeKernel kernel = MoeKernel::kGateUpSilu;

  absl::Status Enqueue(DeviceStream stream) override;
};

// An arm's device buffers, its launch plan and its two launches (the sel kernels' initialized
// once, in PrepareArm, so that a timed launch is the launch alone).
struct Arm {
  KernelVariant variant = KernelVariant::kPerSlot;
  int slots = 0;
  DeviceBuffer x, h_in, h_out, y, partials;
  DeviceBuffer group_expert, group_slot_table;
  DeviceSlotGroups groups;
  DeviceBuffer floor_experts;  // FloorExperts(variant, sel): what a floor variant reads
  int floor_blocks = 0;
  SelLaunch sel_gate_up, sel_down;  // initialized for the per-slot and union variants
  KernelLaunch gate_up, down;
};

// What the floor kernel reads for `kernel` of an arm: the codes and scales of the arm's floor
// experts (every slot's, or each distinct expert once), in the checkpoint's layout.
ReadFloorArgs FloorArgs(const Banks& banks, const Arm& arm, MoeKernel kernel) {
  const DeviceNvfp4Bank bank =
      (kernel == MoeKernel::kGateUpSilu ? banks.gate_up : banks.down).View(false);
  const int64_t code_bytes = int64_t{bank.rows} * bank.cols / 2;
  const int64_t scale_bytes = int64_t{bank.rows} * bank.cols / kNvfp4BlockSize;
  ReadFloorArgs args;
  args.regions[0] = {bank.codes, code_bytes, code_bytes};
  args.regions[1] = {bank.scales, scale_bytes, scale_bytes};
  args.sel = arm.floor_experts.get<int32_t>();
  args.slots = static_cast<int>(arm.floor_experts.bytes() / sizeof(int32_t));
  args.blocks = arm.floor_blocks;
  args.partials = arm.partials.get<uint32_t>();
  return args;
}

absl::Status KernelLaunch::Enqueue(DeviceStream device_stream) {
  const cudaStream_t stream = static_cast<cudaStream_t>(device_stream);
  if (IsFloor(arm->variant)) {
    return LaunchReadFloor(FloorArgs(*banks, *arm, kernel), stream);
  }
  return (kernel == MoeKernel::kGateUpSilu ? arm->sel_gate_up : arm->sel_down).Run(stream);
}

// Plans an arm's two sel launches on the banks as they lie now (PlaceBanks frees every arm).
absl::Status InitializeSelLaunches(const Banks& banks, Arm& arm) {
  SelGuSiluArgs gate_up;
  gate_up.gate_up = banks.gate_up.View(true);
  gate_up.gate_global = banks.gate_global.get<float>();
  gate_up.up_global = banks.up_global.get<float>();
  gate_up.x = arm.x.get<float>();
  gate_up.selected = banks.geometry.selected;
  gate_up.groups = arm.groups;
  gate_up.h = arm.h_out.get<float>();
  RETURN_IF_ERROR(arm.sel_gate_up.Initialize(gate_up));
  SelDownArgs down;
  down.down = banks.down.View(true);
  down.down_global = banks.down_global.get<float>();
  down.h = arm.h_in.get<float>();
  down.groups = arm.groups;
  down.y = arm.y.get<float>();
  return arm.sel_down.Initialize(down);
}

class CudaArms final : public MoeArms {
 public:
  explicit CudaArms(Backend& device) : device_(device), placement_rng_(std::random_device{}()) {}

  absl::Status LoadBanks(const MoeGeometry& geometry, uint64_t seed) override {
    CUDA_RETURN_IF_ERROR(cudaSetDevice(device_.Ordinal()));  // the caller's thread may be new
    if (banks_ && banks_->geometry == geometry && banks_->seed == seed) return absl::OkStatus();
    arms_.Clear();
    banks_.reset();
    ASSIGN_OR_RETURN(MoeBanks host, SynthesizeBanks(geometry, seed));
    auto banks = std::make_unique<Banks>();
    banks->geometry = geometry;
    banks->seed = seed;
    ASSIGN_OR_RETURN(banks->gate_up, DeviceBank::Upload(host.gate_up, geometry.experts,
                                                        SelBank::kGateUp, Stream()));
    ASSIGN_OR_RETURN(banks->down,
                     DeviceBank::Upload(host.down, geometry.experts, SelBank::kDown, Stream()));
    ASSIGN_OR_RETURN(banks->gate_global, DeviceBuffer::FromHost(host.gate_global));
    ASSIGN_OR_RETURN(banks->up_global, DeviceBuffer::FromHost(host.up_global));
    ASSIGN_OR_RETURN(banks->down_global, DeviceBuffer::FromHost(host.down_global));
    banks_ = std::move(banks);
    return absl::OkStatus();
  }

  absl::Status PlaceBanks() override {
    CUDA_RETURN_IF_ERROR(cudaSetDevice(device_.Ordinal()));
    if (!banks_) return absl::FailedPreconditionError("PlaceBanks before LoadBanks");
    arms_.Clear();
    const auto draw = [this] {
      return int64_t{256} * std::uniform_int_distribution<int64_t>(0, 8191)(placement_rng_);
    };
    RETURN_IF_ERROR(banks_->gate_up.Move(draw, Stream()));
    RETURN_IF_ERROR(banks_->down.Move(draw, Stream()));
    for (DeviceBuffer* buffer : {&banks_->gate_global, &banks_->up_global, &banks_->down_global}) {
      ASSIGN_OR_RETURN(*buffer, DeviceBuffer::CopyOf(*buffer, draw(), Stream()));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<ArmHandle> PrepareArm(const ArmInputs& inputs) override {
    CUDA_RETURN_IF_ERROR(cudaSetDevice(device_.Ordinal()));
    if (!banks_) return absl::FailedPreconditionError("PrepareArm before LoadBanks");
    const MoeGeometry& g = banks_->geometry;
    auto arm = std::make_unique<Arm>();
    arm->variant = inputs.variant;
    arm->slots = static_cast<int>(inputs.sel.size());
    // The launch plan and the launches are built here, once per arm: outside every timed region.
    const SlotGroups plan = inputs.variant == KernelVariant::kUnion ? UnionGroups(inputs.sel)
                                                                    : PerSlotGroups(inputs.sel);
    RETURN_IF_ERROR(CanImplementSelKernels(g, plan.max_group_slots));
    ASSIGN_OR_RETURN(arm->x, DeviceBuffer::FromHost(inputs.x));
    ASSIGN_OR_RETURN(arm->h_in, DeviceBuffer::FromHost(inputs.h));
    ASSIGN_OR_RETURN(arm->h_out, DeviceBuffer::Allocate(int64_t{4} * arm->slots * g.ff));
    ASSIGN_OR_RETURN(arm->y, DeviceBuffer::Allocate(int64_t{4} * arm->slots * g.hidden));
    ASSIGN_OR_RETURN(arm->group_expert, DeviceBuffer::FromHost(plan.expert));
    ASSIGN_OR_RETURN(arm->group_slot_table, DeviceBuffer::FromHost(SlotTable(plan)));
    arm->groups = {arm->group_expert.get<int32_t>(),
                   arm->group_slot_table.get<int32_t>(),
                   plan.groups(),
                   plan.max_group_slots,
                   arm->slots,
                   SlotsAreGroups(plan),
                   DistinctExperts(plan)};
    ASSIGN_OR_RETURN(arm->floor_experts,
                     DeviceBuffer::FromHost(FloorExperts(inputs.variant, inputs.sel)));
    arm->floor_blocks = kFloorBlocksPerSm * device_.Details().multiprocessors;
    ASSIGN_OR_RETURN(arm->partials, DeviceBuffer::Allocate(arm->floor_blocks * sizeof(uint32_t)));
    if (!IsFloor(inputs.variant)) RETURN_IF_ERROR(InitializeSelLaunches(*banks_, *arm));
    return arms_.Add(std::move(arm), banks_.get());
  }

  absl::StatusOr<DeviceLaunch*> Launch(ArmHandle handle, MoeKernel kernel) override {
    return arms_.Launch(handle, kernel);
  }

  absl::StatusOr<LaunchOutput> RunOnce(ArmHandle handle, MoeKernel kernel) override {
    CUDA_RETURN_IF_ERROR(cudaSetDevice(device_.Ordinal()));
    ASSIGN_OR_RETURN(Arm * arm, arms_.Find(handle));
    LaunchOutput out;
    if (IsFloor(arm->variant)) {
      ASSIGN_OR_RETURN(out.checksum, ReadFloorChecksum(FloorArgs(*banks_, *arm, kernel), Stream()));
      return out;
    }
    DeviceBuffer& target = kernel == MoeKernel::kGateUpSilu ? arm->h_out : arm->y;
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(target.get(), 0xFF, target.bytes(), Stream()));  // NaN
    RETURN_IF_ERROR(
        (kernel == MoeKernel::kGateUpSilu ? arm->gate_up : arm->down).Enqueue(Stream()));
    out.values.resize(target.bytes() / sizeof(float));
    CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out.values.data(), target.get(), target.bytes(),
                                         cudaMemcpyDeviceToHost, Stream()));
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(Stream()));
    return out;
  }

  void ReleaseArms() override { arms_.Clear(); }

 private:
  cudaStream_t Stream() const { return static_cast<cudaStream_t>(device_.Stream()); }

  Backend& device_;
  std::unique_ptr<Banks> banks_;
  ArmTable<Arm> arms_;
  std::mt19937_64 placement_rng_;  // PlaceBanks' offsets: a fresh draw in every daemon
};

}  // namespace

std::unique_ptr<MoeArms> CudaMoeArms(Backend& device) { return std::make_unique<CudaArms>(device); }

}  // namespace gpuprobe
