// The probe interface: what the daemon runs for a job. Every probe (the MoE routed-union probe,
// the streaming read, an operator's command) goes through the same four steps, and nothing
// outside its folder knows what a probe measures:
//   Info      its name, parameters with their limits, the axes of its arms and its metrics;
//   Resolve   a request's parameters validated, every default filled in: the resolved spec,
//             stored with the job when it is accepted and never resolved again;
//   Plan      the resolved spec against a device: what the device cannot do is refused before
//             any memory is taken, and the device time and artifact bytes are estimated;
//   Run       the resolved spec on the device, publishing started, progress, results.
//
//   const Probe* probe = registry.Find(request.probe());
//   ASSIGN_OR_RETURN(google::protobuf::Any resolved, probe->Resolve(request));
//   ASSIGN_OR_RETURN(ProbePlan plan, probe->Plan(resolved, request.check(), device));
//   JobOutcome outcome = probe->Run({.resolved = resolved}, device, publish, cancelled);
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/any.pb.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/device/backend.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

// Where a running job's events go (the daemon stores each before any watcher sees it).
using EventPublisher = std::function<void(v1::JobEvent)>;

// How a job ended on its device.
struct JobOutcome {
  absl::Status status;
  int results = 0;  // results (or checks) produced
};

// What a resolved job asks of a device.
struct ProbePlan {
  double device_seconds = 0.0;  // roughly: for admission and the worker's watchdog
  int64_t artifact_bytes = 0;   // what the job keeps in the daemon's artifact store
};

// One job as its probe runs it.
struct ProbeRun {
  std::string job_id;
  google::protobuf::Any resolved;  // what Resolve returned when the job was accepted
  bool check = false;              // the probe's exactness check rather than its timing
  std::string artifact_dir;        // where the job may keep artifacts; empty: none
};

class Probe {
 public:
  virtual ~Probe() = default;

  // Name, description, parameters, axes and metrics, as ListProbes reports them.
  virtual const v1::ProbeInfo& Info() const = 0;
  const std::string& Name() const { return Info().name(); }

  // The request's parameters (its params message, or NAME=VALUE text) validated and completed:
  // INVALID_ARGUMENT names the field, the value and the limit.
  virtual absl::StatusOr<google::protobuf::Any> Resolve(const v1::ProbeRequest& request) const = 0;

  // The resolved spec against `device`: UNIMPLEMENTED, INVALID_ARGUMENT or RESOURCE_EXHAUSTED
  // for what the device cannot do (named), before any device memory is taken.
  virtual absl::StatusOr<ProbePlan> Plan(const google::protobuf::Any& resolved, bool check,
                                         const Backend& device) const = 0;

  // Runs the job to its end on the calling thread; stops between launches once `cancelled`.
  // Publishes started, then progress, telemetry and results; the caller publishes finished.
  virtual JobOutcome Run(const ProbeRun& run, Backend& device, const EventPublisher& publish,
                         const std::atomic<bool>& cancelled) const = 0;
};

}  // namespace gpuprobe
