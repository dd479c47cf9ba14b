// Device telemetry from NVML, loaded at run time (dlopen of the driver's libnvidia-ml.so.1):
// no build-time dependency, and a host without the library simply has no telemetry.
//
//   std::unique_ptr<NvmlTelemetry> nvml = NvmlTelemetry::Open(pci_bus_id);  // null: none
//   if (nvml) TelemetrySample s = nvml->Sample(getpid());
#pragma once

#include <memory>
#include <string>

#include "server/device/backend.h"

namespace gpuprobe {

class NvmlTelemetry {
 public:
  // The device with this PCI bus id ("0000:3B:00.0", from cudaDeviceGetPCIBusId), or null
  // where NVML cannot be loaded or does not know the device (the reason is logged once).
  static std::unique_ptr<NvmlTelemetry> Open(const std::string& pci_bus_id);
  NvmlTelemetry(const NvmlTelemetry&) = delete;
  NvmlTelemetry& operator=(const NvmlTelemetry&) = delete;
  ~NvmlTelemetry();

  // Clocks, clock-event reasons, power, temperature and the compute processes on the device
  // other than `own_pid` and the processes of process group `own_group` (0: none). Fields NVML
  // could not read stay 0.
  TelemetrySample Sample(int own_pid, int own_group = 0) const;

 private:
  struct Api;
  NvmlTelemetry(std::unique_ptr<Api> api, void* device);
  std::unique_ptr<Api> api_;
  void* device_;  // nvmlDevice_t
};

}  // namespace gpuprobe
