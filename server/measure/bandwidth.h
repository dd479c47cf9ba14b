// The bandwidth a probe derives from the bytes a launch reads and its time, the same way for
// every probe.
//
//   const double tbps = Tbps(bytes, median_us);
//   if (auto pct = PercentOfRead(tbps, device.Details().calibrated_read_tbps)) ...
#pragma once

#include <optional>

namespace gpuprobe {

// bytes / microseconds / 1e6 = terabytes per second; 0 for a time that is not positive.
inline double Tbps(double bytes, double us) { return us > 0.0 ? bytes / us / 1e6 : 0.0; }

// `tbps` as a percentage of the device's calibrated streaming read; none where the device has
// no calibration (the cpu).
inline std::optional<double> PercentOfRead(double tbps, double calibrated_read_tbps) {
  if (!(calibrated_read_tbps > 0.0)) return std::nullopt;
  return 100.0 * tbps / calibrated_read_tbps;
}

}  // namespace gpuprobe
