// The device worker: gpuprobed started by the daemon with --worker-fd. It owns the backend
// (and with it the CUDA context), announces itself, then runs the jobs the daemon sends, one
// at a time, reporting their events and outcome. A crash here costs the daemon one job.
//
// Fault injection for tests only: with GPUPROBE_ALLOW_FAULTS=1 in the environment, a job
// labelled gpuprobe.fault=abort aborts the worker, =hang stops it, =slow waits 1 ms more in every
// timed sample of that job (a known slowdown).
#pragma once

#include <memory>

#include "server/device/backend.h"
#include "server/probes/registry.h"

namespace gpuprobe {

// Returns the process exit code: 0 once the daemon closes the socket.
// `visible_devices` is reported in the hello, so the daemon knows how many workers to start.
int RunWorker(int fd, std::unique_ptr<Backend> backend, int visible_devices,
              const ProbeRegistry& probes);

}  // namespace gpuprobe
