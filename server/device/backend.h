// The interface between the probes and a device. A backend gives memory, a stream, timers and
// telemetry; each probe's device code (its buffers and kernels, one file per backend in the
// probe's folder) enqueues its launches on Stream() and has them timed by Time. The probes call
// it from one thread (the device's worker); implementations need no locking.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<ReadBuffers> reads, ReadBuffersOn(backend));
//   ASSIGN_OR_RETURN(int buffer, reads->Allocate(bytes, seed));
//   ASSIGN_OR_RETURN(double us, backend.Time(reads->Read(buffer), timing));
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpuprobe {

enum class TimingMode { kEvents, kGraph };
enum class CacheMode { kWarm, kCold };

std::string_view TimingName(TimingMode timing);  // "events", "graph"
std::string_view CacheName(CacheMode cache);     // "warm", "cold"

struct TimingOptions {
  TimingMode timing = TimingMode::kEvents;
  CacheMode cache = CacheMode::kWarm;
  // Graph mode: launches per sample; the sample is their total time / this count.
  int graph_launches = 10;
};

// Where a launch's work goes: the device's stream (cuda: a cudaStream_t); null on the cpu.
using DeviceStream = void*;

// Work a probe launches on a device, timed by Backend::Time. The device keeps what it needs to
// time the launch again (a captured graph) with the launch, so it lives as long as the launch.
class DeviceLaunch {
 public:
  virtual ~DeviceLaunch() = default;
  // Enqueues the work on `stream` (cuda), or does it (cpu). Also called while the device
  // captures a graph: it must not synchronize or allocate.
  virtual absl::Status Enqueue(DeviceStream stream) = 0;

  // The device's own state for this launch (a backend's type); empty until it times it.
  std::shared_ptr<void>& timer_state() { return timer_state_; }

 private:
  std::shared_ptr<void> timer_state_;
};

// The device as GetServerInfo reports it. Zero where a backend has no such figure.
struct DeviceDetails {
  std::string name;
  int multiprocessors = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int driver_version = 0;  // CUDA's encoding, e.g. 13000
  int runtime_version = 0;
  // Streaming read bandwidth measured at start-up, TB/s.
  double calibrated_read_tbps = 0.0;
  int64_t calibration_bytes = 0;
};

// One reading of the device while a sweep runs (NVML on cuda; the cpu backend has none).
struct TelemetrySample {
  int sm_mhz = 0;
  int memory_mhz = 0;
  // NVML's clock-event (throttle) reasons, a bit mask.
  uint64_t clock_event_reasons = 0;
  double power_w = 0.0;
  int temperature_c = 0;
  struct Process {
    int pid = 0;
    std::string name;
  };
  // Compute processes on the device other than the one measuring.
  std::vector<Process> foreign_processes;
};

// The clock-event reasons that slow the clocks below what was asked: software power cap,
// hardware slowdown, software and hardware thermal slowdown, power brake. (Idle, the
// applications clock setting, sync boost and display settings are not throttling.)
inline constexpr uint64_t kThrottleReasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

// The throttling reasons in a clock-event mask, by name ("sw_power_cap", "hw_slowdown",
// "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake").
std::vector<std::string> ThrottleReasonNames(uint64_t clock_event_reasons);

// What a sample says may have disturbed a measurement, for people; empty when nothing.
std::string Disturbance(const TelemetrySample& s);

// Whether a sample says the measurement may be disturbed.
inline bool Disturbed(const TelemetrySample& s) {
  return (s.clock_event_reasons & kThrottleReasons) != 0 || !s.foreign_processes.empty();
}

class Backend {
 public:
  virtual ~Backend() = default;

  // "cpu" or "cuda".
  virtual std::string Name() const = 0;
  // The device's CUDA ordinal (what CUDA_VISIBLE_DEVICES names); 0 for the cpu.
  virtual int Ordinal() const { return 0; }
  // The device as every row names it, e.g. "cpu (reference kernels)".
  virtual std::string Description() const = 0;
  // Bytes a probe's buffers (a sweep's banks) may take on this device.
  virtual int64_t MemoryCapacityBytes() const = 0;
  // Timers: one sample of `launch`, microseconds. Events: one launch between two events. Graph:
  // graph_launches launches captured once (kept with the launch) and replayed, the sample their
  // mean. Cold: the device's last-level cache overwritten before each launch, outside the timed
  // region. A launch of every probe is timed here; only its work is the probe's.
  virtual absl::StatusOr<double> Time(DeviceLaunch& launch, const TimingOptions& options) = 0;
  // Where probes' device code enqueues work (cuda: the device's cudaStream_t); null on the cpu,
  // whose launches run on the calling thread.
  virtual DeviceStream Stream() const { return nullptr; }

  virtual DeviceDetails Details() const = 0;

  // What a probe keeps on this device across jobs (the moe-union banks), by probe name; freed
  // with the device.
  std::shared_ptr<void>& Resident(const std::string& probe) { return resident_[probe]; }

  // A reading of the device now; none where the backend has no telemetry (cpu, or no NVML).
  virtual std::optional<TelemetrySample> SampleTelemetry() { return std::nullopt; }
  // Processes of this process group (0: none) are the probe's own, never foreign (the command
  // probe's executable and its children).
  virtual void SetOwnProcessGroup(int) {}

 private:
  std::map<std::string, std::shared_ptr<void>> resident_;
};

}  // namespace gpuprobe
