// Generic results (v1::Result) as probes build them: an arm's axes, each metric's statistics
// over its kept samples (median, min, max, spread, 95% bootstrap interval), derived values; and
// the declarations in ProbeInfo that name them (axes and derived values: common/result_values.h).
//
//   v1::Result r;
//   *r.add_axes() = IntAxis("size_bytes", bytes);
//   *r.add_metrics() = MetricOf("read_us", "us", samples);
//   *r.add_derived() = Derived("tbps", "TB/s", bytes / median_us / 1e6);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result_values.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

// Requires non-empty samples.
v1::MetricStats MetricOf(const std::string& name, const std::string& unit,
                         const std::vector<double>& samples);

// A declaration of ProbeInfo (a parameter, an axis, a metric, a derived value).
v1::ProbeParam Param(const std::string& name, const std::string& type,
                     const std::string& default_value, const std::string& limits,
                     const std::string& description);
v1::ProbeQuantity Quantity(const std::string& name, const std::string& unit,
                           const std::string& description);

}  // namespace gpuprobe
