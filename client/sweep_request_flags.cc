#include "client/sweep_request_flags.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/labels.h"
#include "common/status_macros.h"

namespace gpuprobe {

absl::Status LabelsFromFlags(const ClientFlags& flags,
                             google::protobuf::Map<std::string, std::string>& labels) {
  for (const std::string& label : flags.label) {
    if (absl::Status s = ParseLabels("--label", label, labels); !s.ok()) return s;
  }
  return absl::OkStatus();
}

EnvLookup ProcessEnv() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value == nullptr ? std::nullopt : std::optional<std::string>(value);
  };
}

absl::StatusOr<double> ParseFraction(std::string_view flag, std::string_view text) {
  absl::string_view number(text.data(), text.size());
  const bool percent = absl::ConsumeSuffix(&number, "%");
  double value = 0;
  if (!absl::SimpleAtod(number, &value) || !(value > 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a positive number like 2%% or 0.02", flag));
  }
  return percent ? value / 100.0 : value;
}

absl::StatusOr<v1::CheckRequest> CheckRequestFromFlags(const ClientFlags& f, const EnvLookup& env) {
  v1::CheckRequest request;
  RETURN_IF_ERROR(f.moe_union.Fill(env, request));
  // The daemon keeps the dump as the job's artifacts; the CLI fetches them into --dump DIR.
  request.set_dump(!f.dump.empty());
  RETURN_IF_ERROR(LabelsFromFlags(f, *request.mutable_labels()));
  return request;
}

absl::StatusOr<v1::SweepRequest> SweepRequestFromFlags(const ClientFlags& f, const EnvLookup& env) {
  v1::SweepRequest request;
  RETURN_IF_ERROR(f.moe_union.Fill(env, request));
  RETURN_IF_ERROR(LabelsFromFlags(f, *request.mutable_labels()));
  return request;
}

}  // namespace gpuprobe
