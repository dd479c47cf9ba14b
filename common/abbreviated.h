// A value quoted back in an error message: never more than a short prefix of what a client
// sent, so that a megabyte-long field is not echoed whole.
//
//   return absl::NotFoundError(absl::StrCat("job_id: no job \"", Abbreviated(id), "\""));
#pragma once

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace gpuprobe {

inline constexpr size_t kQuotedPrefixBytes = 40;

inline std::string Abbreviated(absl::string_view text) {
  if (text.size() <= kQuotedPrefixBytes) return std::string(text);
  return absl::StrCat(text.substr(0, kQuotedPrefixBytes), "... (", text.size(), " bytes)");
}

}  // namespace gpuprobe
