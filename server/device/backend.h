// The interface between the probes and a device. A backend gives memory, a stream, timing
// primitives (marks, capture and replay) and telemetry; each probe's device code (its buffers
// and kernels, one file per backend in the probe's folder) enqueues its launches on Stream(),
// and the measurement module (server/measure/launch_timer.h) times them with the primitives.
// The probes call it from one thread (the device's worker); implementations need no locking.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<ReadBuffers> reads, ReadBuffersOn(backend));
//   ASSIGN_OR_RETURN(int buffer, reads->Allocate(bytes, seed));
//   LaunchTimer timer(backend);
//   ASSIGN_OR_RETURN(double us, timer.Time(reads->Read(buffer), timing));
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
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

// Work a probe launches on a device, timed by the measurement module, which keeps what it needs
// to time the launch again (a captured graph) with the launch, so it lives as long as the launch.
class DeviceLaunch {
 public:
  virtual ~DeviceLaunch() = default;
  // Enqueues the work on `stream` (cuda), or does it (cpu). Also called while the device
  // captures a graph: it must not synchronize or allocate.
  virtual absl::Status Enqueue(DeviceStream stream) = 0;

  // The timer's own state for this launch (server/measure's type); empty until it is timed.
  std::shared_ptr<void>& timer_state() { return timer_state_; }

 private:
  std::shared_ptr<void> timer_state_;
};

// Memory on a device, freed with this object.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual int64_t bytes() const = 0;
};

// Points in a device's stream of work whose times can be read once the work is done: CUDA
// events on cuda; the timing thread's CPU time, read as the mark is reached, on the cpu.
class TimeMarks {
 public:
  virtual ~TimeMarks() = default;
  // Enqueues mark `mark` (also while the device captures work).
  virtual absl::Status Record(int mark) = 0;
  // Microseconds from mark `from` to mark `to`; both recorded, and the device synchronized.
  virtual absl::StatusOr<double> ElapsedUs(int from, int to) = 0;
};

// Work captured once and enqueued again as a unit (cuda: an instantiated CUDA graph).
class CapturedWork {
 public:
  virtual ~CapturedWork() = default;
  virtual absl::Status Replay() = 0;
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
  // Where probes' device code enqueues work (cuda: the device's cudaStream_t); null on the cpu,
  // whose launches run on the calling thread.
  virtual DeviceStream Stream() const { return nullptr; }
  // Bytes of the device's last-level cache (cuda: the L2).
  virtual int64_t LastLevelCacheBytes() const { return 0; }

  // The primitives the measurement module times launches with. A backend that runs no work
  // (the daemon's picture of a worker's device) keeps these defaults, which fail.
  //
  // Makes this the calling thread's device; first on a thread, before the others.
  virtual absl::Status Bind() { return NoWork(); }
  // Enqueues one run of `launch` on Stream() (the cpu runs it now).
  virtual absl::Status Enqueue(DeviceLaunch&) { return NoWork(); }
  virtual absl::StatusOr<std::unique_ptr<DeviceMemory>> Allocate(int64_t) { return NoWork(); }
  // Enqueues writes of `value` that pass every cache line of `memory` through the device's
  // caches (ordinary stores, never ones that bypass the cache).
  virtual absl::Status Overwrite(DeviceMemory&, uint8_t) { return NoWork(); }
  // `count` marks, numbered from 0.
  virtual absl::StatusOr<std::unique_ptr<TimeMarks>> NewMarks(int) { return NoWork(); }
  // Captures what `enqueue` enqueues, without running it, as work to replay; `enqueue` is
  // called once here (cuda) or at every replay (cpu), so it must stay callable.
  virtual absl::StatusOr<std::unique_ptr<CapturedWork>> Capture(
      absl::AnyInvocable<absl::Status()>) {
    return NoWork();
  }
  // Waits until everything enqueued is done.
  virtual absl::Status Synchronize() { return NoWork(); }
  // Enqueues a wait of `ns` nanoseconds on Stream() (cuda: a one-thread kernel spinning on the
  // global timer; the cpu spins now), for injected_wait_ns().
  virtual absl::Status EnqueueWait(int64_t) { return NoWork(); }

  // Testing only (gpuprobed --inject-delay-ns): the timers put one wait of this many
  // nanoseconds inside every timed sample, a known slowdown for testing what judges the rows.
  // Set after the device's start-up calibration; the description says so. 0: none.
  int64_t injected_wait_ns() const { return injected_wait_ns_; }
  void set_injected_wait_ns(int64_t ns) { injected_wait_ns_ = ns; }
  // What a description's notes add for it: ", injected wait N ns per sample", or nothing.
  std::string InjectedWaitNote() const;

  virtual DeviceDetails Details() const = 0;

  // What a probe (the moe-union banks) or the measurement module (the cold-cache flush's
  // memory) keeps on this device across jobs, by name; freed with the device.
  std::shared_ptr<void>& Resident(const std::string& name) { return resident_[name]; }

  // A reading of the device now; none where the backend has no telemetry (cpu, or no NVML).
  virtual std::optional<TelemetrySample> SampleTelemetry() { return std::nullopt; }
  // Processes of this process group (0: none) are the probe's own, never foreign (the command
  // probe's executable and its children).
  virtual void SetOwnProcessGroup(int) {}

 private:
  absl::Status NoWork() const;

  int64_t injected_wait_ns_ = 0;
  std::map<std::string, std::shared_ptr<void>> resident_;
};

}  // namespace gpuprobe
