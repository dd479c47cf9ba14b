#include "server/probes/job_events.h"

#include <random>

#include "absl/time/clock.h"
#include "common/param_text.h"
#include "common/seeded_rng.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/time_util.h"

namespace gpuprobe {

google::protobuf::Timestamp NowTimestamp() {
  return google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(absl::Now()));
}

v1::TimingMode TimingToProto(TimingMode timing) {
  return timing == TimingMode::kGraph ? v1::TIMING_MODE_GRAPH : v1::TIMING_MODE_EVENTS;
}

v1::CacheMode CacheToProto(CacheMode cache) {
  return cache == CacheMode::kCold ? v1::CACHE_MODE_COLD : v1::CACHE_MODE_WARM;
}

v1::ArmOrder OrderToProto(ArmOrder order) {
  return order == ArmOrder::kRotate    ? v1::ARM_ORDER_ROTATE
         : order == ArmOrder::kShuffle ? v1::ARM_ORDER_SHUFFLE
                                       : v1::ARM_ORDER_FIXED;
}

TimingMode TimingFromProto(v1::TimingMode timing) {
  return timing == v1::TIMING_MODE_GRAPH ? TimingMode::kGraph : TimingMode::kEvents;
}

CacheMode CacheFromProto(v1::CacheMode cache) {
  return cache == v1::CACHE_MODE_COLD ? CacheMode::kCold : CacheMode::kWarm;
}

ArmOrder OrderFromProto(v1::ArmOrder order) {
  return order == v1::ARM_ORDER_ROTATE    ? ArmOrder::kRotate
         : order == v1::ARM_ORDER_SHUFFLE ? ArmOrder::kShuffle
                                          : ArmOrder::kFixed;
}

v1::SamplingEnd SamplingEndToProto(SamplingEnd end) {
  switch (end) {
    case SamplingEnd::kReps:
      return v1::SAMPLING_END_REPS;
    case SamplingEnd::kPrecision:
      return v1::SAMPLING_END_PRECISION;
    case SamplingEnd::kMaxSeconds:
      return v1::SAMPLING_END_MAX_SECONDS;
    case SamplingEnd::kMaxReps:
      return v1::SAMPLING_END_MAX_REPS;
  }
  return v1::SAMPLING_END_UNSPECIFIED;
}

v1::Verdict VerdictToProto(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFaster:
      return v1::VERDICT_FASTER;
    case Verdict::kSlower:
      return v1::VERDICT_SLOWER;
    case Verdict::kSame:
      return v1::VERDICT_SAME;
    case Verdict::kUnsure:
      return v1::VERDICT_UNSURE;
    case Verdict::kTooFewReps:
      return v1::VERDICT_TOO_FEW_REPS;
  }
  return v1::VERDICT_UNSPECIFIED;
}

v1::DeviceDetails DeviceDetailsToProto(const DeviceDetails& d) {
  v1::DeviceDetails out;
  out.set_name(d.name);
  out.set_multiprocessors(d.multiprocessors);
  out.set_l2_bytes(d.l2_bytes);
  out.set_memory_bytes(d.memory_bytes);
  out.set_driver_version(d.driver_version);
  out.set_runtime_version(d.runtime_version);
  out.set_calibrated_read_tbps(d.calibrated_read_tbps);
  out.set_calibration_bytes(d.calibration_bytes);
  return out;
}

v1::JobEvent AcceptedEvent(const std::string& job_id, int queue_position) {
  v1::JobEvent event;
  event.mutable_accepted()->set_job_id(job_id);
  event.mutable_accepted()->set_queue_position(queue_position);
  return event;
}

v1::JobEvent ProgressEvent(int reps_done, int reps_total, double elapsed_s) {
  v1::JobEvent event;
  event.mutable_progress()->set_reps_done(reps_done);
  event.mutable_progress()->set_reps_total(reps_total);
  event.mutable_progress()->set_elapsed_s(elapsed_s);
  return event;
}

v1::JobEvent StartedEvent(const std::string& probe, const std::string& device,
                          const google::protobuf::Message& spec) {
  v1::JobEvent event;
  v1::JobStarted& started = *event.mutable_started();
  started.set_device(device);
  *started.mutable_started_at() = NowTimestamp();
  started.set_probe(probe);
  started.mutable_resolved()->PackFrom(spec);
  for (const auto& [name, value] : ParamsAsText(spec)) {
    v1::ParamText* text = started.add_resolved_params();
    text->set_name(name);
    text->set_value(value);
  }
  return event;
}

v1::JobEvent FinishedEvent(const absl::Status& status, int rows, double elapsed_s) {
  v1::JobEvent event;
  v1::JobFinished* f = event.mutable_finished();
  f->set_state(status.ok()                                     ? v1::JOB_STATE_SUCCEEDED
               : status.code() == absl::StatusCode::kCancelled ? v1::JOB_STATE_CANCELLED
                                                               : v1::JOB_STATE_FAILED);
  f->set_error_code(static_cast<int>(status.code()));
  f->set_error_message(std::string(status.message()));
  f->set_rows(rows);
  f->set_elapsed_s(elapsed_s);
  *f->mutable_finished_at() = NowTimestamp();
  return event;
}

uint64_t FreshSeed() {
  return MixSeed(std::random_device{}(), static_cast<uint64_t>(absl::ToUnixNanos(absl::Now())));
}

v1::TelemetryReading ReadingToProto(const TelemetrySample& s) {
  v1::TelemetryReading r;
  r.set_sm_mhz(static_cast<uint32_t>(s.sm_mhz));
  r.set_memory_mhz(static_cast<uint32_t>(s.memory_mhz));
  r.set_clock_event_reasons(s.clock_event_reasons);
  for (const std::string& name : ThrottleReasonNames(s.clock_event_reasons)) {
    r.add_throttle_reasons(name);
  }
  r.set_power_w(s.power_w);
  r.set_temperature_c(static_cast<uint32_t>(s.temperature_c));
  for (const TelemetrySample::Process& p : s.foreign_processes) {
    v1::ForeignProcess* f = r.add_foreign_processes();
    f->set_pid(static_cast<uint32_t>(p.pid));
    f->set_name(p.name);
  }
  return r;
}

v1::JobEvent TelemetryEvent(const TelemetrySample& sample) {
  v1::JobEvent event;
  *event.mutable_telemetry() = ReadingToProto(sample);
  return event;
}

}  // namespace gpuprobe
