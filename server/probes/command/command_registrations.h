// The operator's commands, from gpuprobed's flags: --probe-command NAME=PATH (repeatable: a
// command without parameters whose first output column is its axis) and --probe-commands FILE
// (a CommandProbeConfig in protobuf's JSON mapping, declaring each command's parameters, axes
// and bounds). Every path must be an absolute path to an executable file; nothing a client sends
// ever adds one.
//
//   ASSIGN_OR_RETURN(std::vector<v1::CommandRegistration> commands,
//                    LoadCommandRegistrations({"seed=/opt/probes/moe_union_probe"}, ""));
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/probes/command/command_probe.pb.h"

namespace gpuprobe {

// INVALID_ARGUMENT names the flag (or the file and the command) and what is wrong; defaults
// (max_seconds 600, max_output_bytes 16 MiB, max_lines 100000) filled in.
absl::StatusOr<std::vector<gpuprobe::v1::CommandRegistration>> LoadCommandRegistrations(
    const std::vector<std::string>& name_equals_path, const std::string& file);

}  // namespace gpuprobe
