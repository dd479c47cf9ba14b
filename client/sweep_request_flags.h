// Builds a SweepRequest from the `gpuprobe sweep` flags. A flag not given falls back to the
// seed probe's environment variable (MEMRA_MOEU_EXPERTS, _HIDDEN, _FF, _SELECTED, _T, _REPS);
// a field set by neither is left unset, and the server applies its defaults.
//
//   ASSIGN_OR_RETURN(v1::SweepRequest request, SweepRequestFromFlags(flags, ProcessEnv()));
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "client/client_flags.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

// Reads an environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

EnvLookup ProcessEnv();

// INVALID_ARGUMENT names the flag (or variable) and what is wrong with its value.
absl::StatusOr<gpuprobe::v1::SweepRequest> SweepRequestFromFlags(const ClientFlags& flags,
                                                                 const EnvLookup& env);

// "2%" or "0.02" as 0.02; INVALID_ARGUMENT names `flag` unless a positive number.
absl::StatusOr<double> ParseFraction(std::string_view flag, std::string_view text);

// --label k=v,k2=v2 into `labels`; INVALID_ARGUMENT names a label not of the form key=value.
absl::Status LabelsFromFlags(const ClientFlags& flags,
                             google::protobuf::Map<std::string, std::string>& labels);

// `gpuprobe check`: the same geometry flags and variables, --t as the chunk's token count,
// --unions, --variant (default all), --seed (default fresh), --dump DIR.
absl::StatusOr<gpuprobe::v1::CheckRequest> CheckRequestFromFlags(const ClientFlags& flags,
                                                                 const EnvLookup& env);

}  // namespace gpuprobe
