// The one CSV writer of every `--format csv` output (RFC 4180): a field is quoted where it holds
// a comma, a quote or a line break, its quotes doubled; a number is its shortest text that reads
// back as the same double; an absent value is an empty field.
//
//   out << CsvLine({CsvField(id), CsvNumber(row.gu_us()), ""});
#pragma once

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/shortest_double.h"

namespace gpuprobe {

inline std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
}

// Every field through CsvField, joined by commas, ending the line.
inline std::string CsvLine(const std::vector<std::string>& fields) {
  return absl::StrCat(
      absl::StrJoin(fields, ",",
                    [](std::string* out, const std::string& f) { out->append(CsvField(f)); }),
      "\n");
}

inline std::string CsvNumber(double value) { return ShortestDouble(value); }

}  // namespace gpuprobe
