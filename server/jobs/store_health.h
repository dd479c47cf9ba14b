// Whether the daemon's job store takes writes, as the daemon last found out, and who hears when
// that changes (the health service): false after a failed write or heartbeat, true again once a
// probe write succeeds (every heartbeat tries one, and so does a submit).
//
//   if (absl::Status s = health.Ensure(); !s.ok()) return s;  // refuse the job
//   health.Set(false, write_error);                            // a write failed
#pragma once

#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "server/store/job_store.h"

namespace gpuprobe {

class StoreHealth {
 public:
  explicit StoreHealth(JobStore& store) : store_(store) {}

  bool Writable();
  // `listener` hears every change from now on; null: none.
  void OnChange(std::function<void(bool writable)> listener);
  // Records what a write, a heartbeat or a probe write found; logs a change and tells the
  // listener.
  void Set(bool writable, const absl::Status& why);
  // OK when the store takes writes, trying a probe write once it could not; otherwise
  // RESOURCE_EXHAUSTED saying what must be freed.
  absl::Status Ensure();

 private:
  JobStore& store_;
  absl::Mutex mu_;
  bool writable_ ABSL_GUARDED_BY(mu_) = true;
  std::function<void(bool)> listener_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuprobe
