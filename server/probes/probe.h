// The probe interface: what the daemon runs for a job. Every probe (the MoE routed-union probe,
// the streaming read, an operator's command) goes through the same four steps, and nothing
// outside its folder knows what a probe measures:
//   Info      its name, parameters with their limits, the axes of its arms and its metrics;
//   Resolve   a request's parameters validated, every default filled in: the resolved spec,
//             a typed message, stored with the job (packed in an Any) when it is accepted and
//             never resolved again;
//   Plan      the resolved spec against a device: what the device cannot do is refused before
//             any memory is taken, and the device time and artifact bytes are estimated;
//   Run       the resolved spec on the device, publishing started, progress, results.
// The spec is unpacked from its stored Any once per process that plans or runs the job (Open):
// by the daemon that runs it, and by a worker process, which is handed it packed.
//
//   const Probe* probe = registry.Find(request.probe());
//   ASSIGN_OR_RETURN(ProbeSpec spec, probe->Resolve(request));   // stored as Any::PackFrom(*spec)
//   ASSIGN_OR_RETURN(ProbePlan plan, probe->Plan(*spec, request.check(), device));
//   JobOutcome outcome = probe->Run({.spec = spec}, device, publish, cancelled);
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/any.pb.h"
#include "google/protobuf/message.h"
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
  // The longest the job's run may go without an event (a rep's progress) before its worker is
  // declared stuck and killed; 0: the daemon's rule (--min-watchdog-seconds plus 10 times
  // device_seconds). A probe that runs a client's code bounds it by its launches.
  double silence_seconds = 0.0;
};

// A resolved spec: the probe's params message (or its check's), every default filled in.
using ProbeSpec = std::shared_ptr<const google::protobuf::Message>;

// One job as its probe runs it.
struct ProbeRun {
  std::string job_id;
  ProbeSpec spec;            // what Resolve returned when the job was accepted
  bool check = false;        // the probe's exactness check rather than its timing
  std::string artifact_dir;  // where the job may keep artifacts; empty: none
  // The bytes of the modules the spec names (Probe::Modules), by id, read from the store.
  std::map<std::string, std::string> modules;
};

// The spec as the probe's own message type T: INTERNAL where it is another (a spec that came
// from neither the probe's Resolve nor its Open).
template <typename T>
absl::StatusOr<const T*> SpecAs(const google::protobuf::Message& spec) {
  const T* typed = google::protobuf::DynamicCastToGenerated<T>(&spec);
  if (typed == nullptr) {
    return absl::InternalError(absl::StrCat("spec: a ", spec.GetTypeName(), ", not the ",
                                            T::descriptor()->full_name(), " the probe resolves"));
  }
  return typed;
}

class Probe {
 public:
  virtual ~Probe() = default;

  // Name, description, parameters, axes and metrics, as ListProbes reports them.
  virtual const v1::ProbeInfo& Info() const = 0;
  const std::string& Name() const { return Info().name(); }

  // The request's parameters (its params message, or NAME=VALUE text) validated and completed:
  // INVALID_ARGUMENT names the field, the value and the limit.
  virtual absl::StatusOr<ProbeSpec> Resolve(const v1::ProbeRequest& request) const = 0;

  // The modules (ids of client uploads) a resolved spec names: admission refuses a job whose
  // module is not stored, the store keeps them while the job waits, and the run gets their bytes
  // (ProbeRun.modules). None for a probe that runs no client code.
  virtual std::vector<std::string> Modules(const google::protobuf::Message& /*spec*/) const {
    return {};
  }

  // A stored resolved spec unpacked as the probe's params message (its check's where `check`):
  // DATA_LOSS where it is another type or does not parse.
  absl::StatusOr<ProbeSpec> Open(const google::protobuf::Any& resolved, bool check) const;

  // The resolved spec against `device`: UNIMPLEMENTED, INVALID_ARGUMENT or RESOURCE_EXHAUSTED
  // for what the device cannot do (named), before any device memory is taken.
  virtual absl::StatusOr<ProbePlan> Plan(const google::protobuf::Message& spec, bool check,
                                         const Backend& device) const = 0;

  // Runs the job to its end on the calling thread; stops between launches once `cancelled`.
  // Publishes started, then progress, telemetry and results; the caller publishes finished.
  virtual JobOutcome Run(const ProbeRun& run, Backend& device, const EventPublisher& publish,
                         const std::atomic<bool>& cancelled) const = 0;
};

}  // namespace gpuprobe
