// Runs one job's work on a backend, wherever the backend lives (in the daemon, or in a device
// worker process): resolves the stored request, publishes started, progress and rows (or
// checks), and returns how it ended. The caller records the end and publishes finished.
//
//   JobOutcome outcome = ExecuteJob(request, "", limits, backend, publish, cancelled);
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/device/backend.h"
#include "server/probe/sweep_spec.h"

namespace gpuprobe {

struct JobOutcome {
  absl::Status status;
  int results = 0;  // rows or kernel checks
  std::optional<double> reference_section_us;
};

using EventPublisher = std::function<void(gpuprobe::v1::JobEvent)>;

// `artifact_dir`: the directory the daemon made for the job's artifacts (a check with dump),
// or empty.
JobOutcome ExecuteJob(const gpuprobe::v1::SubmitRequest& request, const std::string& artifact_dir,
                      const SweepLimits& limits, Backend& backend, const EventPublisher& publish,
                      const std::atomic<bool>& cancelled);

}  // namespace gpuprobe
