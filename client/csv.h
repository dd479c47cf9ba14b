// One CSV field as RFC 4180 writes it: quoted where it holds a comma, a quote or a line break,
// its quotes doubled.
//
//   out << CsvField(detail);
#pragma once

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace gpuprobe {

inline std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
}

}  // namespace gpuprobe
