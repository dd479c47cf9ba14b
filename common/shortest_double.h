// A double as its shortest text that reads back as the same double ("93.538", "0.1", "12"):
// numbers for scripts (csv) and for Prometheus, neither rounded nor padded with noise digits.
#pragma once

#include <charconv>
#include <string>

namespace gpuprobe {

inline std::string ShortestDouble(double value) {
  char text[32];
  const std::to_chars_result end = std::to_chars(text, text + sizeof text, value);
  return std::string(text, end.ptr);
}

}  // namespace gpuprobe
