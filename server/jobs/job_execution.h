// Runs one job on a backend, wherever the backend lives (in the daemon, or in a device worker
// process): finds the job's probe and hands it the job's resolved spec. The probe publishes
// started, progress and results; the caller records the end and publishes finished.
//
//   JobOutcome outcome = ExecuteJob(registry, "moe-union", run, backend, publish, cancelled);
#pragma once

#include <atomic>
#include <string>

#include "server/device/backend.h"
#include "server/probes/probe.h"
#include "server/probes/registry.h"

namespace gpuprobe {

JobOutcome ExecuteJob(const ProbeRegistry& probes, const std::string& probe, const ProbeRun& run,
                      Backend& backend, const EventPublisher& publish,
                      const std::atomic<bool>& cancelled);

}  // namespace gpuprobe
