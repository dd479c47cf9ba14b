#include "server/jobs/job_comparison.h"

#include <map>
#include <tuple>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/abbreviated.h"
#include "common/status_macros.h"
#include "server/probes/moe_union/moe_union_mapping.h"
#include "server/probes/moe_union/moe_union_probe.h"
#include "server/probes/registry.h"
#include "server/measure/comparison.h"

namespace gpuprobe {
namespace {

constexpr double kDefaultThreshold = 0.02;

// The device model a job ran on: its description up to the first " (" ("NVIDIA H200",
// "cpu").
std::string Model(const v1::Job& job) {
  const std::string& d = job.device();
  return d.substr(0, d.find(" ("));
}

bool IsSweep(const v1::Job& job) { return job.probe() == kMoeUnionProbe && !job.check(); }

// The sweep the job ran, from the spec stored when it was accepted.
absl::StatusOr<SweepSpec> SweepOf(const v1::Job& job) {
  return MoeUnionSpecOf(job.resolved(), /*check=*/false, SweepLimits{});
}

absl::StatusOr<SweepSpec> SucceededSweep(const char* field, const v1::Job& job) {
  if (!IsSweep(job) || job.state() != v1::JOB_STATE_SUCCEEDED) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: %s is a %s %s; compare succeeded moe-union sweeps", field, job.id(),
        job.check() ? absl::StrCat(job.probe(), " check") : job.probe(),
        absl::AsciiStrToLower(v1::JobState_Name(job.state()).substr(10))));
  }
  return SweepOf(job);
}

// The first field in which two sweeps may not differ, or empty.
std::string Mismatch(const SweepSpec& a, const SweepSpec& b) {
  if (a.geometry.experts != b.geometry.experts) return "experts";
  if (a.geometry.hidden != b.geometry.hidden) return "hidden";
  if (a.geometry.ff != b.geometry.ff) return "ff";
  if (a.geometry.selected != b.geometry.selected) return "selected";
  if (a.timing != b.timing) return "timing";
  if (a.cache != b.cache) return "cache";
  return "";
}

// "label:KEY=VALUE": the newest succeeded sweep with that label, the candidate's geometry,
// timing and cache, other than the candidate itself.
absl::StatusOr<v1::Job> BaseByLabel(JobManager& manager, const std::string& base,
                                    const v1::Job& candidate, const SweepSpec& wanted) {
  const std::string label = base.substr(6);
  const size_t eq = label.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("base: \"%s\" is neither a job id nor label:KEY=VALUE", Abbreviated(base)));
  }
  v1::ListJobsRequest list;
  list.add_states(v1::JOB_STATE_SUCCEEDED);
  (*list.mutable_labels())[label.substr(0, eq)] = label.substr(eq + 1);
  list.set_page_size(100);
  for (int page = 0; page < 100; ++page) {
    ASSIGN_OR_RETURN(v1::ListJobsResponse jobs, manager.List(list));
    for (const v1::Job& job : jobs.jobs()) {
      if (job.id() == candidate.id() || !IsSweep(job)) continue;
      absl::StatusOr<SweepSpec> spec = SweepOf(job);
      if (spec.ok() && Mismatch(*spec, wanted).empty()) return job;
    }
    if (jobs.next_page_token().empty()) break;
    list.set_page_token(jobs.next_page_token());
  }
  return absl::NotFoundError(absl::StrFormat(
      "base: no succeeded sweep labelled %s with the candidate's geometry, timing and cache",
      Abbreviated(label)));
}

// The rows of a job's last attempt, by (variant, t, union).
using ArmKey = std::tuple<int, uint32_t, uint32_t>;
absl::StatusOr<std::map<ArmKey, v1::Row>> RowsByArm(JobManager& manager, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<v1::JobEvent> results, manager.Results(id));
  std::map<ArmKey, v1::Row> rows;
  for (const v1::JobEvent& e : results) {
    if (!e.has_row()) continue;
    const v1::Arm& a = e.row().arm();
    rows[{a.variant(), a.t(), a.union_size()}] = e.row();
  }
  return rows;
}

ArmSamples SamplesOf(const v1::Row& row) {
  return {std::vector<double>(row.gu_samples_us().begin(), row.gu_samples_us().end()),
          std::vector<double>(row.down_samples_us().begin(), row.down_samples_us().end())};
}

}  // namespace

absl::StatusOr<v1::CompareJobsResponse> CompareJobs(JobManager& manager,
                                                    const v1::CompareJobsRequest& request) {
  ComparisonOptions options;
  options.threshold = request.threshold() == 0.0 ? kDefaultThreshold : request.threshold();
  if (!(options.threshold > 0.0 && options.threshold < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("threshold: %g is outside (0, 1)", request.threshold()));
  }
  ASSIGN_OR_RETURN(v1::Job candidate, manager.Get(request.candidate()));
  ASSIGN_OR_RETURN(SweepSpec candidate_spec, SucceededSweep("candidate", candidate));
  v1::Job base;
  if (absl::StartsWith(request.base(), "label:")) {
    ASSIGN_OR_RETURN(base, BaseByLabel(manager, request.base(), candidate, candidate_spec));
  } else {
    ASSIGN_OR_RETURN(base, manager.Get(request.base()));
  }
  ASSIGN_OR_RETURN(SweepSpec base_spec, SucceededSweep("base", base));
  if (Model(base) != Model(candidate)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("device: %s ran on %s, %s on %s; compare jobs of one device model",
                        base.id(), Model(base), candidate.id(), Model(candidate)));
  }
  if (const std::string field = Mismatch(base_spec, candidate_spec); !field.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s and %s differ in %s; compare sweeps of one geometry, timing and cache", field,
        base.id(), candidate.id(), field));
  }
  ASSIGN_OR_RETURN(auto base_rows, RowsByArm(manager, base.id()));
  ASSIGN_OR_RETURN(auto candidate_rows, RowsByArm(manager, candidate.id()));
  v1::CompareJobsResponse response;
  response.set_base_job_id(base.id());
  response.set_candidate_job_id(candidate.id());
  response.set_threshold(options.threshold);
  response.set_confidence(options.confidence);
  for (const auto& [key, cand] : candidate_rows) {
    auto found = base_rows.find(key);
    if (found == base_rows.end()) continue;
    const RatioEstimate r = CompareSections(SamplesOf(found->second), SamplesOf(cand), options);
    v1::ArmComparison* arm = response.add_arms();
    *arm->mutable_arm() = cand.arm();
    arm->set_base_section_us(found->second.section_us());
    arm->set_candidate_section_us(cand.section_us());
    arm->set_ratio(r.ratio);
    arm->set_ratio_low(r.low);
    arm->set_ratio_high(r.high);
    arm->set_verdict(VerdictToProto(r.verdict));
    switch (r.verdict) {
      case Verdict::kFaster:
        response.set_faster(response.faster() + 1);
        break;
      case Verdict::kSlower:
        response.set_slower(response.slower() + 1);
        break;
      case Verdict::kSame:
        response.set_same(response.same() + 1);
        break;
      case Verdict::kUnsure:
        response.set_unsure(response.unsure() + 1);
        break;
      case Verdict::kTooFewReps:
        response.set_too_few_reps(response.too_few_reps() + 1);
        break;
    }
  }
  return response;
}

}  // namespace gpuprobe
