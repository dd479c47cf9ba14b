// The events every probe's jobs share (accepted, progress, telemetry, finished), the device's
// figures as protos, and the enums every timed probe uses.
//
//   publish(ProgressEvent(reps_done, reps_total, elapsed_s));
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/device/backend.h"
#include "server/measure/arm_order.h"
#include "server/measure/comparison.h"
#include "server/measure/interleaved.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

google::protobuf::Timestamp NowTimestamp();

// A seed no earlier job used: for checks submitted without one.
uint64_t FreshSeed();

v1::TimingMode TimingToProto(TimingMode timing);
v1::CacheMode CacheToProto(CacheMode cache);
v1::ArmOrder OrderToProto(ArmOrder order);
// A resolved spec's modes (set and valid) as the measurement module's.
TimingMode TimingFromProto(v1::TimingMode timing);
CacheMode CacheFromProto(v1::CacheMode cache);
ArmOrder OrderFromProto(v1::ArmOrder order);
v1::SamplingEnd SamplingEndToProto(SamplingEnd end);
v1::Verdict VerdictToProto(Verdict verdict);
v1::DeviceDetails DeviceDetailsToProto(const DeviceDetails& details);
v1::TelemetryReading ReadingToProto(const TelemetrySample& sample);

// A job's start: the device, the time, the probe and its resolved spec, as an Any and as text
// (ParamsAsText).
v1::JobEvent StartedEvent(const std::string& probe, const std::string& device,
                          const google::protobuf::Message& spec);
v1::JobEvent AcceptedEvent(const std::string& job_id, int queue_position);
v1::JobEvent ProgressEvent(int reps_done, int reps_total, double elapsed_s);
v1::JobEvent TelemetryEvent(const TelemetrySample& sample);
// SUCCEEDED for OK, CANCELLED for a CANCELLED status, FAILED otherwise.
v1::JobEvent FinishedEvent(const absl::Status& status, int results, double elapsed_s);

}  // namespace gpuprobe
