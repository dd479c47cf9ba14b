// Runs one job that a device worker process was handed: finds the job's probe, unpacks its
// resolved spec (the worker's one unpack of it) and runs it. The probe publishes started,
// progress and results; the caller records the end and publishes finished.
//
//   JobOutcome outcome = ExecuteJob(registry, command.run(), backend, publish, cancelled);
#pragma once

#include <atomic>

#include "gpuprobe/v1/worker.pb.h"
#include "server/device/backend.h"
#include "server/probes/probe.h"
#include "server/probes/registry.h"

namespace gpuprobe {

JobOutcome ExecuteJob(const ProbeRegistry& probes, const v1::WorkerRunJob& job, Backend& backend,
                      const EventPublisher& publish, const std::atomic<bool>& cancelled);

}  // namespace gpuprobe
