// Host launchers of the routed NVFP4 MoE kernels on CUDA (sm_90a):
//   sel_gu_silu: h[slot] = silu(gate) * up, [gate; up] = W_gu[sel[slot]] . x[slot / selected]
//   sel_down:    y[slot] = W_dn[sel[slot]] . h[slot]
// The work is one SlotGroups group per expert read: one slot for the per-slot kernels, up to
// eight slots sharing an expert for the union-gather kernels. Codes are read in gpuprobe's sel
// layout (kernels/nvfp4_pack.h; LaunchToSelLayout writes it once when the banks are loaded)
// with 16-byte loads, decoded exactly to f16 (code * 2^-14) and multiplied on the tensor cores
// (mma.m16n8k16, f32 accumulation) against the inputs split into f16 hi + lo parts after a
// per-row power-of-two scaling; each 16-element block's sum is scaled by its e4m3 block scale
// in f32, so the result carries fp32-level error, not f16's. The grid is sized to the card:
// one persistent block per SM streams a balanced range of 16-row tiles; where measured to pay
// (kernels/sel/launch_deals.h) the per-slot gate+up interleaves a token's experts in that range,
// and the union kernels' blocks split K in clusters of two.
//
//   RETURN_IF_ERROR(CanImplementSelKernels(geometry, plan.max_group_slots));
//   SelLaunch gate_up;
//   RETURN_IF_ERROR(gate_up.Initialize(args));  // once, outside anything timed
//   RETURN_IF_ERROR(gate_up.Run(stream));       // the launch alone
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "kernels/moe_geometry.h"

namespace gpuprobe {

// Device pointers to all experts of one NVFP4 tensor (layout of MoeBanks).
struct DeviceNvfp4Bank {
  const uint8_t* codes = nullptr;   // [experts][rows][cols / 2], 16-byte aligned
  const uint8_t* scales = nullptr;  // [experts][rows][cols / 16], 16-byte aligned
  // The sel kernels take banks in the sel layout (LaunchToSelLayout), the floor the
  // checkpoint's.
  int experts = 0;
  int rows = 0;  // per expert
  int cols = 0;  // inputs per row
};

// Device copy of a SlotGroups plan.
struct DeviceSlotGroups {
  const int32_t* expert = nullptr;      // [groups]
  const int32_t* slot_table = nullptr;  // [groups][max_group_slots], SlotTable(plan)
  int groups = 0;
  int max_group_slots = 0;  // 1 for per-slot plans, at most 8
  int slots_total = 0;      // slots of all groups
  // What decides whether the per-slot gate+up kernel takes token windows or an early start
  // (kernels/sel/launch_deals.h): group g serves slot g alone (SlotsAreGroups), and the plan's
  // distinct experts (DistinctExperts).
  bool slots_are_groups = false;
  int distinct_experts = 0;
};

struct SelGuSiluArgs {
  DeviceNvfp4Bank gate_up;             // rows = 2 * ff (gate rows, then up rows), cols = hidden
  const float* gate_global = nullptr;  // [experts]
  const float* up_global = nullptr;    // [experts]
  const float* x = nullptr;            // [tokens][hidden]; slot s reads row s / selected
  int selected = 0;
  DeviceSlotGroups groups;
  float* h = nullptr;  // [slots][ff]
};

struct SelDownArgs {
  DeviceNvfp4Bank down;                // rows = hidden, cols = ff
  const float* down_global = nullptr;  // [experts]
  const float* h = nullptr;            // [slots][ff]
  DeviceSlotGroups groups;
  float* y = nullptr;  // [slots][hidden]
};

// What these kernels support: hidden and ff multiples of 32 (16-byte code loads stay
// aligned), group width <= 8, and a staged input row that fits in shared memory. Checked
// before any allocation; INVALID_ARGUMENT names the field and the limit.
absl::Status CanImplementSelKernels(const MoeGeometry& geometry, int max_group_slots);

// Which bank a sel-layout bank is: its octets' bands follow (kernels/nvfp4_pack.h, SelBands).
enum class SelBank { kGateUp, kDown };

// Writes a checkpoint-layout bank's codes and scales in the sel layout (kernels/nvfp4_pack.h:
// chunks reordered within each band of octets of rows, code bits permuted within each word; every
// expert keeps its bytes and its place). Not a timed kernel: run once per bank.
absl::Status LaunchToSelLayout(const DeviceNvfp4Bank& checkpoint, SelBank bank, uint8_t* sel_codes,
                               uint8_t* sel_scales, cudaStream_t stream);

// One launch of a sel kernel, CUTLASS's way: Initialize checks the arguments, plans the launch
// for the calling thread's current device (kernels/sel/launch_plan.h), picks its deal
// (kernels/sel/launch_deals.h), computes its divisors and raises the kernel's shared-memory
// limit; Run enqueues the launch alone, so a timed region holds no host planning, lock or
// device query. Re-initialize after any argument (a pointer, the groups) changes.
class SelLaunch {
 public:
  SelLaunch();
  ~SelLaunch();
  SelLaunch(SelLaunch&&) noexcept;
  SelLaunch& operator=(SelLaunch&&) noexcept;

  // INVALID_ARGUMENT names what the kernels cannot take; a device query's error as it came.
  absl::Status Initialize(const SelGuSiluArgs& args);
  absl::Status Initialize(const SelDownArgs& args);
  // Enqueues the launch on `stream` (capturable in a CUDA graph) and checks the launch, not its
  // completion. FAILED_PRECONDITION before a successful Initialize.
  absl::Status Run(cudaStream_t stream) const;

  struct Prepared;  // the planned launch (moe_sel_kernels.cu)

 private:
  std::unique_ptr<const Prepared> prepared_;
};

}  // namespace gpuprobe
