#include "server/device/nvml_telemetry.h"

#include <dlfcn.h>
#include <unistd.h>

#include <mutex>
#include <vector>

#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

// The few NVML declarations used, as nvml.h gives them (the ABI is stable across drivers).
using NvmlReturn = int;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr NvmlReturn kNvmlInsufficientSize = 7;
constexpr unsigned kNvmlClockSm = 1;
constexpr unsigned kNvmlClockMem = 2;
constexpr unsigned kNvmlTemperatureGpu = 0;
struct NvmlProcessInfo {  // nvmlProcessInfo_t (v2/v3 layout)
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

}  // namespace

struct NvmlTelemetry::Api {
  void* library = nullptr;
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*by_pci)(const char*, void**) = nullptr;
  NvmlReturn (*clock)(void*, unsigned, unsigned*) = nullptr;
  NvmlReturn (*reasons)(void*, unsigned long long*) = nullptr;
  NvmlReturn (*power)(void*, unsigned*) = nullptr;
  NvmlReturn (*temperature)(void*, unsigned, unsigned*) = nullptr;
  NvmlReturn (*processes)(void*, unsigned*, NvmlProcessInfo*) = nullptr;
  NvmlReturn (*process_name)(unsigned, char*, unsigned) = nullptr;

  ~Api() {
    if (shutdown != nullptr) shutdown();
    if (library != nullptr) dlclose(library);
  }
};

std::unique_ptr<NvmlTelemetry> NvmlTelemetry::Open(const std::string& pci_bus_id) {
  auto api = std::make_unique<Api>();
  api->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  static std::once_flag logged;
  auto none = [&](const std::string& why) -> std::unique_ptr<NvmlTelemetry> {
    std::call_once(logged, [&] { spdlog::info("no device telemetry: {}", why); });
    return nullptr;
  };
  if (api->library == nullptr) return none("libnvidia-ml.so.1 cannot be loaded");
  auto bind = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(api->library, name));
    return fn != nullptr;
  };
  if (!bind(api->init, "nvmlInit_v2") || !bind(api->by_pci, "nvmlDeviceGetHandleByPciBusId_v2") ||
      !bind(api->clock, "nvmlDeviceGetClockInfo") || !bind(api->power, "nvmlDeviceGetPowerUsage") ||
      !bind(api->temperature, "nvmlDeviceGetTemperature") ||
      !bind(api->processes, "nvmlDeviceGetComputeRunningProcesses_v3") ||
      !bind(api->process_name, "nvmlSystemGetProcessName")) {
    return none("libnvidia-ml.so.1 lacks a needed function");
  }
  // The newer name first; drivers before 535 know only the throttle-reasons one.
  if (!bind(api->reasons, "nvmlDeviceGetCurrentClocksEventReasons")) {
    bind(api->reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  if (api->init() != kNvmlSuccess) return none("nvmlInit failed");
  bind(api->shutdown, "nvmlShutdown");
  void* device = nullptr;
  if (api->by_pci(pci_bus_id.c_str(), &device) != kNvmlSuccess) {
    return none("NVML does not know the device at " + pci_bus_id);
  }
  return std::unique_ptr<NvmlTelemetry>(new NvmlTelemetry(std::move(api), device));
}

NvmlTelemetry::NvmlTelemetry(std::unique_ptr<Api> api, void* device)
    : api_(std::move(api)), device_(device) {}

NvmlTelemetry::~NvmlTelemetry() = default;

TelemetrySample NvmlTelemetry::Sample(int own_pid, int own_group) const {
  TelemetrySample s;
  unsigned value = 0;
  if (api_->clock(device_, kNvmlClockSm, &value) == kNvmlSuccess) s.sm_mhz = value;
  if (api_->clock(device_, kNvmlClockMem, &value) == kNvmlSuccess) s.memory_mhz = value;
  if (api_->power(device_, &value) == kNvmlSuccess) s.power_w = value / 1000.0;
  if (api_->temperature(device_, kNvmlTemperatureGpu, &value) == kNvmlSuccess) {
    s.temperature_c = value;
  }
  unsigned long long reasons = 0;
  if (api_->reasons != nullptr && api_->reasons(device_, &reasons) == kNvmlSuccess) {
    s.clock_event_reasons = reasons;
  }
  std::vector<NvmlProcessInfo> processes(16);
  unsigned count = static_cast<unsigned>(processes.size());
  NvmlReturn r = api_->processes(device_, &count, processes.data());
  if (r == kNvmlInsufficientSize) {
    processes.resize(count + 8);
    count = static_cast<unsigned>(processes.size());
    r = api_->processes(device_, &count, processes.data());
  }
  if (r == kNvmlSuccess) {
    for (unsigned i = 0; i < count; ++i) {
      const int pid = static_cast<int>(processes[i].pid);
      if (pid == own_pid || (own_group > 0 && getpgid(pid) == own_group)) continue;
      char name[256] = {};
      api_->process_name(processes[i].pid, name, sizeof(name));
      s.foreign_processes.push_back({static_cast<int>(processes[i].pid), name});
    }
  }
  return s;
}

}  // namespace gpuprobe
