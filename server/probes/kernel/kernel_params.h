// The kernel probe's parameters resolved: the scalar fields by their (param) declarations, the
// buffers, arms and launches by the rules below, every bad field refused naming it and its
// limit ("arms[1].launches[0].block: 2048 threads is more than 1024"), before anything is
// stored or any device memory is taken.
//
//   ASSIGN_OR_RETURN(v1::KernelParams resolved, ResolveKernelParams(std::move(params)));
//   for (const std::string& id : ModuleIds(resolved)) ...   // the modules the job names
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/probes/kernel/kernel.pb.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

// The bounds of a kernel job.
struct KernelLimits {
  int max_buffers = 64;
  int max_arms = 16;
  int max_launches = 16;  // per arm
  int max_args = 64;      // per launch
  int max_rotation = 64;
  int64_t max_buffer_bytes = int64_t{16} << 30;
  int64_t max_total_bytes = int64_t{64} << 30;  // every buffer, times its rotation
  int max_shared_bytes = 227 * 1024;            // Hopper's opt-in per block
  int64_t max_arm_reps = 1'000'000;             // every arm's reps together
  int max_modules = 8;                          // distinct modules a job's launches name
  int64_t max_output_bytes = int64_t{4} << 30;  // an arm's outputs, which a check compares
};

// Defaults filled, every rule checked: 1..max_buffers buffers with unique names, each sized by
// size_bytes or dtype x count (both where they agree), filled (zeros by default) as its dtype
// allows, rotated 1..max_rotation times, within the byte bounds; 1..max_arms arms with unique
// names, each of 1..max_launches launches of a module id and kernel name with 1-3 grid, block and
// cluster dimensions as CUDA allows and at most max_args arguments naming buffers (offsets inside
// them) or typed scalars in their dtype's range; a baseline names another arm; outputs name
// buffers (max_output_bytes an arm); at most max_modules modules; the check's reference arm
// (default the first) and tolerance (default bitwise; abs and rel need the outputs' dtypes).
absl::StatusOr<v1::KernelParams> ResolveKernelParams(v1::KernelParams params,
                                                     const KernelLimits& limits = {});

// The distinct modules the arms' launches name, in first-use order.
std::vector<std::string> ModuleIds(const v1::KernelParams& params);

// The least common multiple of the buffers' rotations: after that many launches every rotated
// buffer is back on its first copy.
int RotationPeriod(const v1::KernelParams& params);

// The device memory the buffers take: each buffer's size times its rotation.
int64_t BufferBytes(const v1::KernelParams& params);

}  // namespace gpuprobe
