// The kernel probe: a client's own compiled CUDA kernels (modules it uploaded: cubin, fatbin or
// PTX) timed under the daemon's harness. The daemon allocates and fills the buffers from the
// seed, loads the modules in a worker that serves the job alone, checks every launch's
// arguments against its kernel's parameter layout, and times the arms interleaved rep by rep as
// every probe's arms are timed; a candidate arm carries its ratio to its baseline arm with an
// interval and a verdict, every arm the hash of the machine code it ran, and a time faster than
// its declared bytes allow is flagged impossible. Its check poisons each arm's outputs, runs
// each arm once and compares them with the reference arm's. It needs a cuda device; the cpu
// backend lists it and refuses its jobs.
#pragma once

#include "server/probes/kernel/kernel_runner.h"
#include "server/probes/probe.h"

namespace gpuprobe {

class KernelProbe final : public Probe {
 public:
  // `runners` gives the device code of a backend (a test may wrap it).
  explicit KernelProbe(KernelRunnerFactory runners = KernelRunnerOn);

  const v1::ProbeInfo& Info() const override { return info_; }
  absl::StatusOr<ProbeSpec> Resolve(const v1::ProbeRequest& request) const override;
  std::vector<std::string> Modules(const google::protobuf::Message& spec) const override;
  absl::StatusOr<ProbePlan> Plan(const google::protobuf::Message& spec, bool check,
                                 const Backend& device) const override;
  JobOutcome Run(const ProbeRun& run, Backend& device, const EventPublisher& publish,
                 const std::atomic<bool>& cancelled) const override;

 private:
  const v1::ProbeInfo info_;
  const KernelRunnerFactory runners_;
};

}  // namespace gpuprobe
