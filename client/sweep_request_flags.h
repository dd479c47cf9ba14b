// moe-union's requests from the `gpuprobe sweep`, `submit` and `check` flags: each declared
// parameter's flag, else the seed probe's environment variable (MEMRA_MOEU_EXPERTS, _HIDDEN,
// _FF, _SELECTED, _T, _REPS), as client/param_flags.h reads them; a field set by neither is left
// unset, and the daemon applies its declared default.
//
//   ASSIGN_OR_RETURN(v1::SweepRequest request, SweepRequestFromFlags(flags, ProcessEnv()));
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "client/client_flags.h"
#include "client/param_flags.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

EnvLookup ProcessEnv();

// INVALID_ARGUMENT names the flag (or variable) and what is wrong with its value.
absl::StatusOr<gpuprobe::v1::SweepRequest> SweepRequestFromFlags(const ClientFlags& flags,
                                                                 const EnvLookup& env);

// `gpuprobe check`: its declared parameters (--t is the chunk's token count), --label, and
// --dump DIR (the daemon keeps the dump; the CLI fetches it).
absl::StatusOr<gpuprobe::v1::CheckRequest> CheckRequestFromFlags(const ClientFlags& flags,
                                                                 const EnvLookup& env);

// "2%" or "0.02" as 0.02; INVALID_ARGUMENT names `flag` unless a positive number.
absl::StatusOr<double> ParseFraction(std::string_view flag, std::string_view text);

// --label k=v,k2=v2 into `labels`; INVALID_ARGUMENT names a label not of the form key=value.
absl::Status LabelsFromFlags(const ClientFlags& flags,
                             google::protobuf::Map<std::string, std::string>& labels);

}  // namespace gpuprobe
