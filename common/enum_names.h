// The short names of the API's enum values, as the CLI's flags, csv, tables, JSON and the HTTP
// API's parameters all spell them: the value's name without its enum's prefix, in lower case,
// words joined by '-' (SAMPLING_END_MAX_SECONDS: "max-seconds", JOB_STATE_SUCCEEDED:
// "succeeded"). The prefix is the UNSPECIFIED value's name without "UNSPECIFIED"; a value that
// does not start with it keeps its whole name (CommandParam's INTEGER: "integer").
#pragma once

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"

namespace gpuprobe {

inline std::string ShortEnumName(const google::protobuf::EnumValueDescriptor& value) {
  const std::string& unspecified = value.type()->FindValueByNumber(0)->name();
  const std::string prefix =
      unspecified.substr(0, unspecified.size() - std::string("UNSPECIFIED").size());
  absl::string_view name = value.name();
  absl::ConsumePrefix(&name, prefix);
  return absl::StrReplaceAll(absl::AsciiStrToLower(name), {{"_", "-"}});
}

}  // namespace gpuprobe
