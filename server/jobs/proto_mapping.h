// Translation between the probe engine's types and the gpuprobe.v1 protos, in both directions:
// requests come in at the API's edge, events and rows go out to streams (and later the store).
//
//   ASSIGN_OR_RETURN(SweepOptions options, SweepOptionsFromProto(request));
//   v1::JobEvent event = RowEvent(row);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/probe/arm_rows.h"
#include "server/probe/exactness.h"
#include "server/probe/sweep_spec.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

enum class JobKind {
  kSweep,  // timed arms, streamed as rows
  kCheck,  // exactness: each arm's kernels once against the float64 reference
};

struct JobSpec {
  JobKind kind = JobKind::kSweep;
  SweepSpec spec;
};

// INVALID_ARGUMENT names a field that holds an enum value this server does not know.
absl::StatusOr<SweepOptions> SweepOptionsFromProto(const v1::SweepRequest& request);

// An exactness request as sweep options: one t (default 6), all variants unless given.
absl::StatusOr<SweepOptions> CheckOptionsFromProto(const v1::CheckRequest& request);

// Resolves and validates a stored or submitted request (INVALID_ARGUMENT naming the field).
absl::StatusOr<JobSpec> ResolveJob(const v1::SubmitRequest& request, const SweepLimits& limits);

// A seed no earlier check used: for checks submitted without one.
uint64_t FreshSeed();

v1::KernelVariant VariantToProto(KernelVariant variant);
v1::TimingMode TimingToProto(TimingMode timing);
v1::CacheMode CacheToProto(CacheMode cache);

v1::ResolvedSweep ResolvedSweepToProto(const SweepSpec& spec, const std::vector<Arm>& arms);
v1::Row RowToProto(const ArmRow& row);
v1::Verdict VerdictToProto(Verdict verdict);
v1::DeviceDetails DeviceDetailsToProto(const DeviceDetails& details);

v1::JobEvent AcceptedEvent(const std::string& job_id, int queue_position);
v1::JobEvent StartedEvent(const std::string& device, const SweepSpec& spec);
v1::JobEvent ProgressEvent(int reps_done, int reps_total, double elapsed_s);
v1::JobEvent RowEvent(const ArmRow& row);
v1::JobEvent CheckEvent(const KernelCheckResult& result);
// SUCCEEDED for OK, CANCELLED for a CANCELLED status, FAILED otherwise.
v1::JobEvent FinishedEvent(const absl::Status& status, int rows, double elapsed_s,
                           std::optional<double> reference_section_us);

}  // namespace gpuprobe
