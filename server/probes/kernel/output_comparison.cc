#include "server/probes/kernel/output_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_format.h"

namespace gpuprobe {
namespace {

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// IEEE binary16 to double.
double HalfToDouble(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v;
  if (exponent == 0) {
    v = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    v = mantissa != 0 ? NAN : INFINITY;
  } else {
    v = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return sign ? -v : v;
}

// bfloat16 (the top half of a binary32) to double.
double Bfloat16ToDouble(uint16_t b) {
  const uint32_t bits = uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Element `i` of a buffer of `dtype`, as a double (64-bit integers beyond 2^53 rounded).
double Element(const std::string& dtype, const char* data, size_t i) {
  if (dtype == "f64") return Load<double>(data + 8 * i);
  if (dtype == "f32") return Load<float>(data + 4 * i);
  if (dtype == "f16") return HalfToDouble(Load<uint16_t>(data + 2 * i));
  if (dtype == "bf16") return Bfloat16ToDouble(Load<uint16_t>(data + 2 * i));
  if (dtype == "i64") return static_cast<double>(Load<int64_t>(data + 8 * i));
  if (dtype == "i32") return Load<int32_t>(data + 4 * i);
  if (dtype == "i16") return Load<int16_t>(data + 2 * i);
  if (dtype == "i8") return Load<int8_t>(data + i);
  if (dtype == "u64") return static_cast<double>(Load<uint64_t>(data + 8 * i));
  if (dtype == "u32") return Load<uint32_t>(data + 4 * i);
  if (dtype == "u16") return Load<uint16_t>(data + 2 * i);
  return Load<uint8_t>(data + i);
}

size_t ElementBytes(const std::string& dtype) {
  if (dtype == "f64" || dtype == "i64" || dtype == "u64") return 8;
  if (dtype == "f32" || dtype == "i32" || dtype == "u32") return 4;
  if (dtype == "f16" || dtype == "bf16" || dtype == "i16" || dtype == "u16") return 2;
  return 1;
}

OutputComparison Bitwise(absl::string_view reference, absl::string_view output) {
  size_t differ = 0, first = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    if (reference[i] != output[i] && differ++ == 0) first = i;
  }
  if (differ == 0) return {true, absl::StrFormat("all %d bytes equal", reference.size())};
  return {false, absl::StrFormat("%d of %d bytes differ, the first at byte %d", differ,
                                 reference.size(), first)};
}

}  // namespace

OutputComparison CompareOutput(const std::string& dtype, const v1::KernelTolerance& tolerance,
                               absl::string_view reference, absl::string_view output) {
  if (reference.size() != output.size()) {
    return {false, absl::StrFormat("%d bytes against the reference's %d", output.size(),
                                   reference.size())};
  }
  if (tolerance.bitwise() || dtype.empty()) return Bitwise(reference, output);
  const size_t count = reference.size() / ElementBytes(dtype);
  double max_abs = 0, max_rel = 0;
  size_t failed = 0, first = 0;
  for (size_t i = 0; i < count; ++i) {
    const double ref = Element(dtype, reference.data(), i);
    const double x = Element(dtype, output.data(), i);
    bool ok;
    if (std::isnan(ref) || std::isnan(x)) {
      ok = std::isnan(ref) && std::isnan(x);
    } else if (std::isinf(ref) || std::isinf(x)) {
      ok = ref == x;
    } else {
      const double err = std::fabs(x - ref);
      max_abs = std::max(max_abs, err);
      if (ref != 0) max_rel = std::max(max_rel, err / std::fabs(ref));
      ok = err <= tolerance.abs() + tolerance.rel() * std::fabs(ref);
    }
    if (!ok && failed++ == 0) first = i;
  }
  const std::string errors = absl::StrFormat(
      "max abs error %g, max rel error %g over %d elements (tolerance abs %g, rel %g)", max_abs,
      max_rel, count, tolerance.abs(), tolerance.rel());
  if (failed == 0) return {true, errors};
  return {false, absl::StrFormat("%d of %d elements out of tolerance, the first at element %d "
                                 "(%g, the reference %g); %s",
                                 failed, count, first, Element(dtype, output.data(), first),
                                 Element(dtype, reference.data(), first), errors)};
}

}  // namespace gpuprobe
