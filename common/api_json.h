// The API's messages as JSON: the CLI's `--format json` streams (one object per line) and the
// HTTP API's bodies. The names are the ones csv, tables and flags use:
// - fields by their proto names (`union_size`, `candidate_job_id`), every field printed;
// - enum values by their short names (`succeeded`, `per-slot`, `max-seconds`; see
//   common/enum_names.h), null for UNSPECIFIED;
// - 64-bit integers as numbers.
// Everything else is protobuf's JSON mapping: Timestamps as RFC 3339 text, an Any as its message
// with "@type", maps as objects, bytes as base64. An Any of a type this build does not know (a
// newer daemon's probe) is {"@type": URL, "value": its bytes in base64}, so every message prints
// whole.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace gpuprobe {

// One line, no line break.
std::string ApiJson(const google::protobuf::Message& message);

// Reads JSON in ApiJson's names, or in protobuf's own mapping (full enum names, 64-bit integers
// as text), into `message`. Unknown fields are an error naming them.
absl::Status ApiJsonToMessage(std::string_view json, google::protobuf::Message* message);

}  // namespace gpuprobe
