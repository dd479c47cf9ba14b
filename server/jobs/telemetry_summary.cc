#include "server/jobs/telemetry_summary.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"

namespace gpuprobe {

v1::TelemetrySummary SummarizeTelemetry(const std::vector<v1::TelemetryReading>& readings,
                                        const std::string& backend) {
  v1::TelemetrySummary s;
  if (readings.empty()) {
    s.set_note(backend == "cpu" ? "none: the cpu backend has no device telemetry"
                                : "none: NVML (libnvidia-ml.so.1) gave no readings on this host");
    return s;
  }
  s.set_available(true);
  s.set_samples(static_cast<uint32_t>(readings.size()));
  std::vector<uint32_t> sm;
  std::set<std::string> reasons;
  std::map<uint32_t, std::string> foreign;
  uint32_t mem_min = UINT32_MAX, mem_max = 0, temperature = 0;
  double power = 0.0;
  for (const v1::TelemetryReading& r : readings) {
    sm.push_back(r.sm_mhz());
    mem_min = std::min(mem_min, r.memory_mhz());
    mem_max = std::max(mem_max, r.memory_mhz());
    power = std::max(power, r.power_w());
    temperature = std::max(temperature, r.temperature_c());
    reasons.insert(r.throttle_reasons().begin(), r.throttle_reasons().end());
    for (const v1::ForeignProcess& p : r.foreign_processes()) foreign[p.pid()] = p.name();
  }
  std::sort(sm.begin(), sm.end());
  s.set_sm_mhz_min(sm.front());
  s.set_sm_mhz_median(sm[sm.size() / 2]);
  s.set_sm_mhz_max(sm.back());
  s.set_memory_mhz_min(mem_min);
  s.set_memory_mhz_max(mem_max);
  s.set_power_w_max(power);
  s.set_temperature_c_max(temperature);
  for (const std::string& reason : reasons) s.add_throttle_reasons(reason);
  for (const auto& [pid, name] : foreign) {
    v1::ForeignProcess* f = s.add_foreign_processes();
    f->set_pid(pid);
    f->set_name(name);
  }
  return s;
}

}  // namespace gpuprobe
