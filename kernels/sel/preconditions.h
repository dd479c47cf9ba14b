// What every sel launcher checks before it launches (CUTLASS's can_implement, in short): device
// pointers set, widths the 16-byte copies need, group plans within the kernels' limits.
// INVALID_ARGUMENT names the tensor or field and the limit.
//
//   RETURN_IF_ERROR(sel::CheckBank("gate_up", args.gate_up));
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "kernels/moe_sel_kernels.h"
#include "kernels/sel/tuning.h"
#include "kernels/slot_groups.h"

namespace gpuprobe::sel {

inline absl::Status CheckGroups(const DeviceSlotGroups& groups) {
  if (groups.groups < 1 || groups.slots_total < groups.groups) {
    return absl::InvalidArgumentError(
        absl::StrFormat("groups: %d groups of %d slots; at least 1 group, and a slot each",
                        groups.groups, groups.slots_total));
  }
  if (groups.max_group_slots < 1 || groups.max_group_slots > kMaxGroupSlots) {
    return absl::InvalidArgumentError(absl::StrFormat("max_group_slots: %d is outside [1, %d]",
                                                      groups.max_group_slots, kMaxGroupSlots));
  }
  if (groups.expert == nullptr || groups.slot_table == nullptr) {
    return absl::InvalidArgumentError("groups: null device pointer");
  }
  return absl::OkStatus();
}

inline absl::Status CheckBank(const char* name, const DeviceNvfp4Bank& bank) {
  if (bank.codes == nullptr || bank.scales == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: null device pointer", name));
  }
  if (bank.cols % kChunkElements != 0 || bank.cols < kChunkElements || bank.rows < 16) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d x %d rows x cols; cols must be a positive multiple of 32, rows at least 16", name,
        bank.rows, bank.cols));
  }
  // The kernels copy codes and scales 16 bytes at a time.
  if (reinterpret_cast<uintptr_t>(bank.codes) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(bank.scales) % 16 != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: codes and scales must be 16-byte aligned", name));
  }
  return absl::OkStatus();
}

}  // namespace gpuprobe::sel
