#include "server/probes/kernel/kernel_results.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/result_values.h"
#include "common/sha256.h"
#include "server/measure/comparison.h"
#include "server/probes/job_events.h"

namespace gpuprobe {
namespace {

// The calibration's margin: a read may beat the calibrated figure by this share.
constexpr double kCalibrationMargin = 0.05;

int ArmIndex(const v1::KernelParams& params, const std::string& name) {
  for (int i = 0; i < params.arms_size(); ++i) {
    if (params.arms(i).name() == name) return i;
  }
  return -1;
}

}  // namespace

std::string ImpossibleTime(double median_us, int64_t bytes_read, CacheMode cache,
                           const DeviceDetails& device) {
  if (device.calibrated_read_tbps <= 0 || median_us <= 0) return "";
  const int64_t from_memory =
      cache == CacheMode::kCold ? bytes_read : bytes_read - std::max<int64_t>(device.l2_bytes, 0);
  if (from_memory <= 0) return "";
  const double least_us = static_cast<double>(from_memory) / (device.calibrated_read_tbps * 1e6);
  if (median_us >= least_us * (1 - kCalibrationMargin)) return "";
  return absl::StrFormat(
      "median %.3g us, but reading the %d bytes that must come from device memory (%s) takes "
      "at least %.3g us at the calibrated %.2f TB/s: the declared bytes_read, or the kernel's "
      "work, is not what it says",
      median_us, from_memory,
      cache == CacheMode::kCold ? "cold: the L2 was flushed" : "those beyond the L2's capacity",
      least_us, device.calibrated_read_tbps);
}

void AddBaselineVerdicts(const v1::KernelParams& params, const Measurement& measurement,
                         std::vector<v1::Result>& results) {
  const ComparisonOptions options{.threshold = params.threshold(), .seed = params.seed()};
  for (int i = 0; i < params.arms_size() && i < static_cast<int>(results.size()); ++i) {
    const int base = ArmIndex(params, params.arms(i).baseline());
    if (base < 0) continue;
    // Arm i's one metric (time_us), each side.
    const std::vector<double>& base_blocks = measurement.block_medians[base][0];
    const std::vector<double>& cand_blocks = measurement.block_medians[i][0];
    const bool by_blocks = static_cast<int>(base_blocks.size()) >= options.min_blocks &&
                           static_cast<int>(cand_blocks.size()) >= options.min_blocks;
    const RatioEstimate r = by_blocks ? CompareBlocks(base_blocks, cand_blocks, options)
                                      : CompareSums({measurement.samples[base][0]},
                                                    {measurement.samples[i][0]}, options);
    v1::Result& result = results[i];
    *result.add_derived() = Derived("vs_baseline", "", r.ratio);
    *result.add_derived() = Derived("vs_baseline_low", "", r.low);
    *result.add_derived() = Derived("vs_baseline_high", "", r.high);
    result.set_verdict(VerdictToProto(r.verdict));
  }
}

void UniformDerived(const google::protobuf::RepeatedPtrField<v1::ProbeQuantity>& declared,
                    std::vector<v1::Result>& results) {
  std::set<std::string> present;
  for (const v1::Result& r : results) {
    for (const v1::DerivedValue& d : r.derived()) present.insert(d.name());
  }
  for (v1::Result& r : results) {
    std::map<std::string, double> values;
    for (const v1::DerivedValue& d : r.derived()) values[d.name()] = d.value();
    r.clear_derived();
    for (const v1::ProbeQuantity& q : declared) {
      if (!present.count(q.name())) continue;
      const auto value = values.find(q.name());
      *r.add_derived() =
          Derived(q.name(), q.unit(),
                  value == values.end() ? std::numeric_limits<double>::quiet_NaN() : value->second);
    }
  }
}

std::string ArmCodeSha256(const std::vector<std::string>& launch_sha256) {
  if (launch_sha256.size() == 1) return launch_sha256[0];
  return Sha256Hex(absl::StrJoin(launch_sha256, ","));
}

}  // namespace gpuprobe
