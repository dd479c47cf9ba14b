#include "server/device/backend.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace gpuprobe {

std::string_view TimingName(TimingMode timing) {
  return timing == TimingMode::kGraph ? "graph" : "events";
}

std::string_view CacheName(CacheMode cache) { return cache == CacheMode::kCold ? "cold" : "warm"; }

std::string Backend::InjectedWaitNote() const {
  if (injected_wait_ns_ == 0) return "";
  return absl::StrFormat(", injected wait %d ns per sample", injected_wait_ns_);
}

absl::Status Backend::NoWork() const {
  return absl::FailedPreconditionError(
      absl::StrFormat("the %s device %s runs no work in this process", Name(), Description()));
}

std::vector<std::string> ThrottleReasonNames(uint64_t clock_event_reasons) {
  static constexpr std::pair<uint64_t, const char*> kNames[] = {{0x4, "sw_power_cap"},
                                                                {0x8, "hw_slowdown"},
                                                                {0x20, "sw_thermal_slowdown"},
                                                                {0x40, "hw_thermal_slowdown"},
                                                                {0x80, "hw_power_brake"}};
  std::vector<std::string> names;
  for (const auto& [bit, name] : kNames) {
    if ((clock_event_reasons & bit) != 0) names.push_back(name);
  }
  return names;
}

std::string Disturbance(const TelemetrySample& s) {
  std::vector<std::string> parts;
  for (const std::string& reason : ThrottleReasonNames(s.clock_event_reasons)) {
    parts.push_back("throttled: " + reason);
  }
  for (const TelemetrySample::Process& p : s.foreign_processes) {
    parts.push_back(absl::StrFormat("foreign process %d %s", p.pid, p.name));
  }
  return absl::StrJoin(parts, "; ");
}

}  // namespace gpuprobe
