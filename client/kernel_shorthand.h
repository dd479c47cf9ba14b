// `gpuprobe kernel` without a spec file: one kernel's launch from flags, as the KernelParams JSON
// the spec file would hold. Buffers are declared with --buffer, arguments given with --arg in the
// kernel's parameter order.
//
//   gpuprobe kernel --module k=scale.cubin --kernel scale --grid 4096 --block 256
//     --buffer x=f32:1048576:normal:0:1 --buffer y=f32:1048576 --arg y --arg x --arg f32:2
//     --arg i32:1048576
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "client/client_flags.h"

namespace gpuprobe {

// The spec's JSON: the buffers; one arm, named after the kernel where that is an arm name (else
// "kernel"), of one launch of `module` (empty: the build --baseline and --candidate give).
// INVALID_ARGUMENT names the flag and the value it cannot read:
//   --grid, --block   X[,Y,Z]
//   --buffer          NAME=DTYPE:COUNT[:zeros | :constant:V | :uniform:A:B | :normal:MEAN:STD]
//   --arg             a buffer's NAME, or DTYPE:VALUE (f64, f32, i64, i32, i16, i8, u64, u32,
//                     u16, u8)
absl::StatusOr<std::string> ShorthandSpecJson(const ClientFlags& flags, const std::string& module);

}  // namespace gpuprobe
