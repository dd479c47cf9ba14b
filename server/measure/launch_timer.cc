#include "server/measure/launch_timer.h"

#include <map>
#include <memory>
#include <tuple>

#include "common/status_macros.h"
#include "server/measure/cold_cache.h"

namespace gpuprobe {
namespace {

// What one way of timing a launch keeps between samples.
struct LaunchTiming {
  std::unique_ptr<TimeMarks> marks;
  std::shared_ptr<ColdCache> cold;     // null when warm
  std::unique_ptr<CapturedWork> work;  // graph mode, once captured
};

// A launch's timer_state: its timings by (timing, cold, graph launches, injected wait): a graph
// captured before the wait changed does not hold the new one.
using LaunchTimings = std::map<std::tuple<TimingMode, bool, int, int64_t>, LaunchTiming>;

// The injected wait (testing only), once per sample, inside its timed region.
absl::Status EnqueueInjectedWait(Backend& device) {
  if (device.injected_wait_ns() == 0) return absl::OkStatus();
  return device.EnqueueWait(device.injected_wait_ns());
}

// Graph mode's work: warm, marks 0 and 1 around all the launches; cold, marks 2i and 2i + 1
// around launch i, after its flush. The injected wait follows launch 0.
absl::Status EnqueueGraphWork(Backend& device, DeviceLaunch& launch, LaunchTiming& t,
                              int launches) {
  if (t.cold == nullptr) RETURN_IF_ERROR(t.marks->Record(0));
  for (int i = 0; i < launches; ++i) {
    if (t.cold != nullptr) {
      RETURN_IF_ERROR(t.cold->Flush());
      RETURN_IF_ERROR(t.marks->Record(2 * i));
    }
    RETURN_IF_ERROR(device.Enqueue(launch));
    if (i == 0) RETURN_IF_ERROR(EnqueueInjectedWait(device));
    if (t.cold != nullptr) RETURN_IF_ERROR(t.marks->Record(2 * i + 1));
  }
  if (t.cold == nullptr) RETURN_IF_ERROR(t.marks->Record(1));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<double> LaunchTimer::Time(DeviceLaunch& launch, const TimingOptions& options) {
  RETURN_IF_ERROR(device_.Bind());  // the caller's thread may be new
  const bool cold = options.cache == CacheMode::kCold;
  const bool graph = options.timing == TimingMode::kGraph;
  const int launches = graph ? options.graph_launches : 1;
  if (launches < 1) return absl::InvalidArgumentError("graph_launches must be at least 1");

  std::shared_ptr<void>& state = launch.timer_state();
  if (state == nullptr) state = std::make_shared<LaunchTimings>();
  LaunchTiming& t = (*static_cast<LaunchTimings*>(
      state.get()))[{options.timing, cold, launches, device_.injected_wait_ns()}];
  if (t.marks == nullptr) {
    if (cold) {
      ASSIGN_OR_RETURN(t.cold, ColdCache::Of(device_));
    }
    ASSIGN_OR_RETURN(t.marks, device_.NewMarks(cold && graph ? 2 * launches : 2));
  }

  if (graph) {
    if (t.work == nullptr) {
      // The device outlives its launches, and `t` lives with the launch.
      ASSIGN_OR_RETURN(t.work, device_.Capture([device = &device_, &launch, &t, launches] {
        return EnqueueGraphWork(*device, launch, t, launches);
      }));
    }
    RETURN_IF_ERROR(t.work->Replay());
  } else {
    if (cold) RETURN_IF_ERROR(t.cold->Flush());
    RETURN_IF_ERROR(t.marks->Record(0));
    RETURN_IF_ERROR(device_.Enqueue(launch));
    RETURN_IF_ERROR(EnqueueInjectedWait(device_));
    RETURN_IF_ERROR(t.marks->Record(1));
  }
  RETURN_IF_ERROR(device_.Synchronize());

  double total_us = 0.0;
  const int pairs = cold && graph ? launches : 1;
  for (int i = 0; i < pairs; ++i) {
    ASSIGN_OR_RETURN(const double us, t.marks->ElapsedUs(2 * i, 2 * i + 1));
    total_us += us;
  }
  return total_us / launches;
}

}  // namespace gpuprobe
