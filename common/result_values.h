// The plain values of a result (gpuprobe.v1.Result): an arm's axis and a derived value, as every
// layer that builds results makes them (the probes; the store reading old moe-union rows).
//
//   *r.add_axes() = IntAxis("size_bytes", bytes);
//   *r.add_derived() = Derived("tbps", "TB/s", bytes / median_us / 1e6);
#pragma once

#include <cstdint>
#include <string>

#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

inline gpuprobe::v1::AxisValue IntAxis(const std::string& name, int64_t value) {
  gpuprobe::v1::AxisValue a;
  a.set_name(name);
  a.set_int_value(value);
  return a;
}

inline gpuprobe::v1::AxisValue TextAxis(const std::string& name, const std::string& value) {
  gpuprobe::v1::AxisValue a;
  a.set_name(name);
  a.set_text_value(value);
  return a;
}

inline gpuprobe::v1::DerivedValue Derived(const std::string& name, const std::string& unit,
                                          double value) {
  gpuprobe::v1::DerivedValue d;
  d.set_name(name);
  d.set_unit(unit);
  d.set_value(value);
  return d;
}

}  // namespace gpuprobe
