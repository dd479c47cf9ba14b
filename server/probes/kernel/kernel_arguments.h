// A launch's arguments against the kernel's own parameter layout, as the driver reports it
// (cuFuncGetParamInfo): one argument per parameter, each the parameter's size (a buffer's
// address is 8 bytes; a scalar is its dtype's size), checked before anything is launched, and
// packed into the bytes the launch passes. Device-free, so that a wrong argument list is tested
// without a GPU.
//
//   ASSIGN_OR_RETURN(std::vector<PackedArgument> args, PackArguments(field, launch, layout));
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/probes/kernel/kernel.pb.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

// One kernel parameter: its offset and size in the parameter buffer, bytes.
struct ParamSlot {
  size_t offset = 0;
  size_t size = 0;
};

// One argument's bytes: a scalar's value, or the address of a buffer's copy plus an offset,
// known only at launch.
struct PackedArgument {
  std::string buffer;  // empty: a scalar
  uint64_t offset_bytes = 0;
  std::array<unsigned char, 8> bytes{};  // the scalar's value, little-endian, `size` bytes
  size_t size = 0;
};

// The launch's arguments packed, one per parameter of `layout`: INVALID_ARGUMENT naming the
// launch (`field`) where the counts differ, and the argument whose size is not its parameter's.
absl::StatusOr<std::vector<PackedArgument>> PackArguments(const std::string& field,
                                                          const v1::KernelLaunch& launch,
                                                          const std::vector<ParamSlot>& layout);

}  // namespace gpuprobe
