// The bounds of a daemon's queue and of each job's run, as gpuprobed's flags set them.
#pragma once

#include <cstdint>

#include "absl/time/time.h"
#include "server/store/job_store.h"

namespace gpuprobe {

struct QueueLimits {
  int max_queued_jobs = 1000;
  // All jobs' artifacts together (ArtifactStore).
  int64_t max_artifact_bytes = int64_t{4} << 30;
  // A device worker may stay silent this long plus 10 times the job's estimated device time
  // before it is declared stuck (killed, the job failed): generous, as bank synthesis and
  // loading before the first rep take host time the estimate does not count.
  absl::Duration min_watchdog = absl::Seconds(120);
  // A job's estimated device time (its launches' bytes at the device's read bandwidth, plus
  // launch overhead) may not exceed this.
  double max_job_seconds = 3600.0;
  // Runs of a job that a daemon restart interrupted before it is failed instead of re-queued.
  int max_attempts = 2;
  // Whether clients may bring GPU code: upload modules (and run them with the kernel probe).
  bool client_kernels = true;
  // The largest module a client may upload, and what modules may take of the store.
  int64_t max_module_bytes = int64_t{64} << 20;
  // The modules one job names, all together (handed to its worker with the job).
  int64_t max_job_module_bytes = int64_t{256} << 20;
  ModuleQuota module_quota;
};

}  // namespace gpuprobe
