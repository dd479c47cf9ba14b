// Which of a run's progress and telemetry events are stored (issue 55, item 8: one transaction
// per rep's progress and per reading made a 1,000-rep job cost a fleet about 1,600): those a
// watcher that comes later, the record or a verdict needs; the rest are told to the live
// watchers only.
//
//   EphemeralEvents ephemeral;
//   if (ephemeral.Store(event, absl::Now())) Publish(id, event); else fanout.Tell(id, event);
#pragma once

#include "absl/time/time.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

class EphemeralEvents {
 public:
  explicit EphemeralEvents(absl::Duration every = absl::Seconds(2)) : every_(every) {}

  // Whether `event`, arriving at `now`, is stored: every event but progress and telemetry;
  // progress, the first, the last (reps_done == reps_total) and the first at least `every` after
  // the last stored; telemetry, the first, every disturbed one (throttling, another process on
  // the device) and the first at least `every` after the last stored.
  bool Store(const v1::JobEvent& event, absl::Time now);

 private:
  const absl::Duration every_;
  absl::Time progress_stored_ = absl::InfinitePast();
  absl::Time telemetry_stored_ = absl::InfinitePast();
};

}  // namespace gpuprobe
