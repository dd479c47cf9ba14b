// The host launches of kernels/moe_sel_kernels.h: SelLaunch::Initialize checks its arguments,
// plans the launch for the card (kernels/sel/launch_plan.h), picks the kernel's deal
// (kernels/sel/launch_deals.h) and the SelNvfp4Kernel instantiation that serves it
// (kernels/sel/sel_kernel.cuh); SelLaunch::Run launches that instantiation.
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <vector>

#include "common/status_macros.h"
#include "kernels/cuda_status.h"
#include "kernels/moe_sel_kernels.h"
#include "kernels/sel/device_query.h"
#include "kernels/sel/launch_deals.h"
#include "kernels/sel/launch_plan.h"
#include "kernels/sel/params.h"
#include "kernels/sel/preconditions.h"
#include "kernels/sel/sel_kernel.cuh"
#include "kernels/sel/tuning.h"

namespace gpuprobe {
namespace sel {
namespace {

// A launch of clusters of two blocks (kClusterKHalves); `attribute` must outlive the config's use.
cudaLaunchConfig_t ClusterOfTwoConfig(int blocks, int threads, size_t smem_bytes,
                                      cudaStream_t stream, cudaLaunchAttribute& attribute) {
  attribute = {};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim = {2, 1, 1};
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

struct DeviceLimits {
  SelDevice device;
  int clusters_of_two = 0;  // kClusterKHalves instantiations: clusters of 2 blocks that fit at once
};

// The card's SM count, L2 size and shared-memory opt-in (and for kClusterKHalves how many
// clusters of two of the largest blocks fit), and the kernel's shared-memory limit raised to
// the opt-in, once per device.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal, int kOctets>
absl::StatusOr<DeviceLimits> PrepareDevice() {
  static std::mutex mu;
  static std::vector<DeviceLimits> limits_by_device;
  int device = 0;
  CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mu);
  if (device >= static_cast<int>(limits_by_device.size())) limits_by_device.resize(device + 1);
  DeviceLimits& limits = limits_by_device[device];
  if (limits.device.sms == 0) {
    const auto kernel = SelNvfp4Kernel<kGateUpSilu, kOneSlot, kDeal, kOctets>;
    ASSIGN_OR_RETURN(const SelDevice properties, QuerySelDevice(device));
    CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              properties.max_smem_bytes));
    int clusters = 0;
    if (kDeal == Deal::kClusterKHalves) {
      cudaLaunchAttribute cluster;
      const cudaLaunchConfig_t config = ClusterOfTwoConfig(
          properties.sms, kMaxWarps * 32, properties.max_smem_bytes, nullptr, cluster);
      CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    }
    limits = {properties, clusters};
  }
  return limits;
}

}  // namespace
}  // namespace sel

// A planned launch: the kernel instantiation's enqueue, its complete parameters and its grid.
struct SelLaunch::Prepared {
  sel::SelParams params;
  int blocks = 0;
  int threads = 0;
  size_t smem_bytes = 0;
  absl::Status (*enqueue)(const Prepared&, cudaStream_t) = nullptr;
};

namespace sel {
namespace {

// Launches the instantiation a Prepared was planned for.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal, int kOctets>
absl::Status Enqueue(const SelLaunch::Prepared& launch, cudaStream_t stream) {
  if constexpr (kDeal == Deal::kClusterKHalves) {
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t config =
        ClusterOfTwoConfig(launch.blocks, launch.threads, launch.smem_bytes, stream, cluster);
    CUDA_RETURN_IF_ERROR(cudaLaunchKernelEx(
        &config, SelNvfp4Kernel<kGateUpSilu, kOneSlot, kDeal, kOctets>, launch.params));
  } else {
    SelNvfp4Kernel<kGateUpSilu, kOneSlot, kDeal, kOctets>
        <<<launch.blocks, launch.threads, launch.smem_bytes, stream>>>(launch.params);
  }
  CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

// Fills in p's plan-dependent fields: the launch of this instantiation, ready to enqueue.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal, int kOctets = 2>
absl::StatusOr<SelLaunch::Prepared> Prepare(SelParams p, const LaunchPlan& plan, int input_rows) {
  RETURN_IF_ERROR((PrepareDevice<kGateUpSilu, kOneSlot, kDeal, kOctets>().status()));
  const int ranges = kDeal == Deal::kClusterKHalves ? plan.blocks / 2 : plan.blocks;
  p.tile_quotient = p.tiles / ranges;
  p.tile_remainder = p.tiles % ranges;
  p.splits = plan.splits;
  p.splits_divisor = FastDivisor::Of(plan.splits);
  p.tiles_per_group_divisor = FastDivisor::Of(p.tiles_per_group);
  p.in_row_divisor = FastDivisor::Of(p.in_row_div);
  p.staged_cols_divisor = FastDivisor::Of(p.staged_cols);
  p.window_positions_divisor =
      FastDivisor::Of(kDeal == Deal::kTokenWindows ? p.in_row_div * p.tiles_per_group : 1);
  p.chunks_per_split = plan.chunks_per_split;
  p.staged_rows = plan.staged_rows;
  p.groups_per_block = plan.groups_per_block;
  p.all_input_rows = plan.all_input_rows ? input_rows : 0;
  p.walk_warps_per_row = std::max(1, plan.warps / plan.staged_rows);
  p.walk_row_step = plan.warps / p.walk_warps_per_row;
  p.walk_divisor = FastDivisor::Of(p.walk_warps_per_row);
  return SelLaunch::Prepared{.params = p,
                             .blocks = plan.blocks,
                             .threads = plan.warps * 32,
                             .smem_bytes = static_cast<size_t>(plan.smem_bytes),
                             .enqueue = &Enqueue<kGateUpSilu, kOneSlot, kDeal, kOctets>};
}

// The launch's work for the planner, with items of `octets` octets of rows (Tuning::kOctets).
template <bool kGateUpSilu, bool kOneSlot, int kOctets = 2>
SelWork WorkOf(const SelParams& p, int groups, int input_rows) {
  using Tune = Tuning<kGateUpSilu, kOneSlot, kOctets>;
  // Gate+up's tile is 8 gate rows and their 8 up rows; a down tile is all its octets' rows.
  const int tiles_per_group = kGateUpSilu ? p.out_rows / 8 : p.out_rows / (8 * kOctets);
  return {.one_slot = kOneSlot,
          .tiles = groups * tiles_per_group,
          .tiles_per_group = tiles_per_group,
          .cols = p.cols,
          .per_thread = Tune::kChunksPerThread,
          .octets = kOctets,
          .stages = Tune::kStages,
          .staged_cols = p.staged_cols,
          .input_rows = input_rows};
}

}  // namespace

// Plans the launch and picks the kernel's deal: token windows where TokenWindowsPay (per-slot
// gate+up), cluster K halves where PlanClusterHalves finds a plan and the card holds it
// (group plans), consecutive tiles otherwise; the per-slot down takes wide items (two tiles an
// item) wherever their plan splits no tile's K (kernels/sel/launch_deals.h says why).
template <bool kGateUpSilu>
absl::StatusOr<SelLaunch::Prepared> PrepareEither(SelParams p, const DeviceSlotGroups& groups,
                                                  int input_rows) {
  const bool one_slot = groups.max_group_slots == 1;
  const SelWork work = one_slot ? WorkOf<kGateUpSilu, true>(p, groups.groups, input_rows)
                                : WorkOf<kGateUpSilu, false>(p, groups.groups, input_rows);
  p.groups = groups.groups;
  p.tiles_per_group = work.tiles_per_group;
  p.tiles = work.tiles;
  ASSIGN_OR_RETURN(const DeviceLimits limits,
                   (PrepareDevice<kGateUpSilu, false, Deal::kConsecutive, 2>()));
  bool windows = false;
  const int64_t distinct_expert_bytes =
      int64_t{groups.distinct_experts} * (p.expert_code_bytes + p.expert_scale_bytes);
  if (kGateUpSilu && one_slot) {
    windows = TokenWindowsPay({.groups = groups.groups,
                               .selected = p.in_row_div,
                               .slots_are_groups = groups.slots_are_groups,
                               .tiles_per_group = p.tiles_per_group,
                               .sms = limits.device.sms,
                               .distinct_expert_bytes = distinct_expert_bytes,
                               .l2_bytes = limits.device.l2_bytes});
  }
  if (!one_slot) {
    if (const std::optional<LaunchPlan> halves = PlanClusterHalves(work, limits.device)) {
      ASSIGN_OR_RETURN(const DeviceLimits cluster_limits,
                       (PrepareDevice<kGateUpSilu, false, Deal::kClusterKHalves, 2>()));
      if (2 * cluster_limits.clusters_of_two >= halves->blocks) {
        return Prepare<kGateUpSilu, false, Deal::kClusterKHalves>(p, *halves, input_rows);
      }
    }
  }
  if constexpr (!kGateUpSilu) {
    if (one_slot) {
      const SelWork wide = WorkOf<false, true, kPerSlotDownOctets>(p, groups.groups, input_rows);
      const absl::StatusOr<LaunchPlan> wide_plan = PlanLaunch(wide, limits.device, 0);
      if (wide_plan.ok() && wide_plan->splits == 1) {
        p.tiles_per_group = wide.tiles_per_group;
        p.tiles = wide.tiles;
        return Prepare<false, true, Deal::kConsecutive, kPerSlotDownOctets>(p, *wide_plan,
                                                                            input_rows);
      }
    }
  }
  ASSIGN_OR_RETURN(const LaunchPlan plan,
                   PlanLaunch(work, limits.device, windows ? p.in_row_div : 0));
  if (one_slot) {
    if constexpr (kGateUpSilu) {
      if (windows) return Prepare<true, true, Deal::kTokenWindows>(p, plan, input_rows);
      if (EarlyStartPays(groups.slots_are_groups, plan.all_input_rows, distinct_expert_bytes,
                         limits.device.l2_bytes)) {
        return Prepare<true, true, Deal::kEarlyConsecutive>(p, plan, input_rows);
      }
    }
    return Prepare<kGateUpSilu, true, Deal::kConsecutive>(p, plan, input_rows);
  }
  return Prepare<kGateUpSilu, false, Deal::kConsecutive>(p, plan, input_rows);
}

}  // namespace sel

absl::Status CanImplementSelKernels(const MoeGeometry& g, int max_group_slots) {
  for (auto [name, cols] : {std::pair<const char*, int>{"hidden", g.hidden}, {"ff", g.ff}}) {
    if (cols % sel::kChunkElements != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d is not a multiple of 32, which the cuda kernels' 16-byte loads need", name,
          cols));
    }
    // The least a launch stages: one group's rows, with one tile per block.
    if (sel::SmemBytes(max_group_slots == 1, cols, max_group_slots, 1, max_group_slots, 1, 1,
                       sel::Tuning<true, true>::kStages, sel::Tuning<true, true>::kChunksPerThread,
                       sel::Tuning<true, true>::kOctets) > sel::kMaxDynamicSmemBytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d inputs x %d slots per group do not fit the %d KiB of shared memory the "
          "cuda kernels stage inputs in",
          name, cols, max_group_slots, sel::kMaxDynamicSmemBytes / 1024));
    }
  }
  return absl::OkStatus();
}

SelLaunch::SelLaunch() = default;
SelLaunch::~SelLaunch() = default;
SelLaunch::SelLaunch(SelLaunch&&) noexcept = default;
SelLaunch& SelLaunch::operator=(SelLaunch&&) noexcept = default;

absl::Status SelLaunch::Run(cudaStream_t stream) const {
  if (prepared_ == nullptr) {
    return absl::FailedPreconditionError("sel launch: Run before a successful Initialize");
  }
  return prepared_->enqueue(*prepared_, stream);
}

absl::Status SelLaunch::Initialize(const SelGuSiluArgs& a) {
  prepared_.reset();
  RETURN_IF_ERROR(sel::CheckBank("gate_up", a.gate_up));
  RETURN_IF_ERROR(sel::CheckGroups(a.groups));
  if (a.gate_up.rows % 16 != 0 || a.selected < 1 || a.x == nullptr || a.h == nullptr ||
      a.gate_global == nullptr || a.up_global == nullptr) {
    return absl::InvalidArgumentError(
        "sel_gu_silu: rows must be 2*ff with ff a multiple of 8, "
        "selected positive, and every pointer set");
  }
  const int ff = a.gate_up.rows / 2;
  const sel::SelParams p{.codes = a.gate_up.codes,
                         .scales = a.gate_up.scales,
                         .expert_code_bytes = int64_t{a.gate_up.rows} * a.gate_up.cols / 2,
                         .expert_scale_bytes = int64_t{a.gate_up.rows} * a.gate_up.cols / 16,
                         .cols = a.gate_up.cols,
                         .out_rows = ff,
                         .staged_cols = a.groups.max_group_slots,
                         .in = a.x,
                         .in_row_div = a.selected,
                         .global_a = a.gate_global,
                         .global_b = a.up_global,
                         .group_expert = a.groups.expert,
                         .group_slot_table = a.groups.slot_table,
                         .out = a.h};
  ASSIGN_OR_RETURN(
      Prepared launch,
      sel::PrepareEither<true>(p, a.groups, (a.groups.slots_total + a.selected - 1) / a.selected));
  prepared_ = std::make_unique<const Prepared>(launch);
  return absl::OkStatus();
}

absl::Status SelLaunch::Initialize(const SelDownArgs& a) {
  prepared_.reset();
  RETURN_IF_ERROR(sel::CheckBank("down", a.down));
  RETURN_IF_ERROR(sel::CheckGroups(a.groups));
  // The per-slot down's wide items are 32 rows (kPerSlotDownOctets).
  if (a.down.rows % 32 != 0 || a.h == nullptr || a.y == nullptr || a.down_global == nullptr) {
    return absl::InvalidArgumentError(
        "sel_down: rows (hidden) must be a multiple of 32 and every pointer set");
  }
  const sel::SelParams p{.codes = a.down.codes,
                         .scales = a.down.scales,
                         .expert_code_bytes = int64_t{a.down.rows} * a.down.cols / 2,
                         .expert_scale_bytes = int64_t{a.down.rows} * a.down.cols / 16,
                         .cols = a.down.cols,
                         .out_rows = a.down.rows,
                         .staged_cols = a.groups.max_group_slots,
                         .in = a.h,
                         .in_row_div = 1,
                         .global_a = a.down_global,
                         .global_b = nullptr,
                         .group_expert = a.groups.expert,
                         .group_slot_table = a.groups.slot_table,
                         .out = a.y};
  ASSIGN_OR_RETURN(Prepared launch, sel::PrepareEither<false>(p, a.groups, a.groups.slots_total));
  prepared_ = std::make_unique<const Prepared>(launch);
  return absl::OkStatus();
}

}  // namespace gpuprobe
