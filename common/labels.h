// Labels as every interface writes them: KEY=VALUE, several joined by ','. The CLI's
// `--label branch=main,commit=abc`, the HTTP API's `?label=branch=main,commit=abc`, and
// compare's base `label:branch=main,commit=abc` (the jobs that carry all of them) read the same
// text. A value cannot hold a ','.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"

namespace gpuprobe {

// Adds each KEY=VALUE of `text` to `labels`; INVALID_ARGUMENT names `field` and the bad part.
inline absl::Status ParseLabels(absl::string_view field, absl::string_view text,
                                google::protobuf::Map<std::string, std::string>& labels) {
  for (absl::string_view label : absl::StrSplit(text, ',')) {
    const size_t eq = label.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": \"", label, "\" is not KEY=VALUE (several: KEY=VALUE,KEY2=VALUE2)"));
    }
    labels[std::string(label.substr(0, eq))] = std::string(label.substr(eq + 1));
  }
  return absl::OkStatus();
}

}  // namespace gpuprobe
