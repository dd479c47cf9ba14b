#include "kernels/nvfp4.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"

namespace gpuprobe {
namespace {

double DecodeE4m3Unchecked(uint8_t byte) {
  const int exponent = (byte >> 3) & 0xF;
  const int mantissa = byte & 0x7;
  const double magnitude = exponent == 0 ? std::ldexp(mantissa / 8.0, -6)
                                         : std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
  return (byte & 0x80) ? -magnitude : magnitude;
}

}  // namespace

absl::StatusOr<double> DecodeE4m3(uint8_t byte) {
  if (IsE4m3Nan(byte)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("e4m3 byte 0x%02X is NaN; NVFP4 scales must be finite", byte));
  }
  return DecodeE4m3Unchecked(byte);
}

const std::array<double, 256>& E4m3Table() {
  static const std::array<double, 256> table = [] {
    std::array<double, 256> t{};
    for (int b = 0; b < 256; ++b) {
      t[b] = IsE4m3Nan(static_cast<uint8_t>(b)) ? std::numeric_limits<double>::quiet_NaN()
                                                : DecodeE4m3Unchecked(static_cast<uint8_t>(b));
    }
    return t;
  }();
  return table;
}

}  // namespace gpuprobe
