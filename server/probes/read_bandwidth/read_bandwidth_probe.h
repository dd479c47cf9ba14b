// The read-bandwidth probe: the time of a streaming read of one device buffer per size (the
// floor kernel on cuda, a host loop on cpu), warm and cold, and what it makes in TB/s and as a
// share of the device's calibrated read. Its check reads each buffer once and compares the
// read's checksum with the host's sum of the words it had to read. Its device code is its own
// (read_buffers.h); the device only times the reads.
#pragma once

#include "server/probes/probe.h"
#include "server/probes/read_bandwidth/read_buffers.h"

namespace gpuprobe {

class ReadBandwidthProbe final : public Probe {
 public:
  // `buffers` gives the device code of a backend (a test may wrap it).
  explicit ReadBandwidthProbe(ReadBuffersFactory buffers = ReadBuffersOn);

  const v1::ProbeInfo& Info() const override { return info_; }
  absl::StatusOr<ProbeSpec> Resolve(const v1::ProbeRequest& request) const override;
  absl::StatusOr<ProbePlan> Plan(const google::protobuf::Message& spec, bool check,
                                 const Backend& device) const override;
  JobOutcome Run(const ProbeRun& run, Backend& device, const EventPublisher& publish,
                 const std::atomic<bool>& cancelled) const override;

 private:
  const v1::ProbeInfo info_;
  const ReadBuffersFactory buffers_;
};

}  // namespace gpuprobe
