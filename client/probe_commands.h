// The commands of any probe: `probes` lists what the daemon serves; `run PROBE` submits a job
// of any probe (parameters as --param NAME=VALUE) and prints its results as they arrive.
//
//   gpuprobe probes
//   gpuprobe run read-bandwidth --param sizes_bytes=1048576 --param caches=warm
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/commands.h"
#include "client/job_stream.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

// probes: each probe with its parameters (type, default, limits), axes and metrics; json: the
// ListProbesResponse on one line.
int ProbesCommand(const ClientContext& context);

// run PROBE [--param NAME=VALUE]... [--check] [--label k=v]: submits the job, tells its id on
// stderr, then prints its results (moe-union: its rows, as `sweep` does) or checks.
int RunCommand(const ClientContext& context, const std::string& probe);

// Submits the job (with --idempotency-key), then prints its results in --format as they are
// stored (what `run` and `sweep` do), or hands its events to the handlers `handlers` makes for
// the job; Ctrl-C cancels it.
int SubmitAndFollow(const ClientContext& context, v1::SubmitRequest submit,
                    const std::function<EventHandlers(const v1::Job&)>& handlers = nullptr);

// A probe request from the command line: the probe, its --param NAME=VALUE arguments, --check
// and --label. INVALID_ARGUMENT names a --param not of the form NAME=VALUE.
absl::StatusOr<v1::ProbeRequest> ProbeRequestFromFlags(const std::string& probe,
                                                       const ClientFlags& flags);

}  // namespace gpuprobe
