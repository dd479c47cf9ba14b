#include "server/jobs/job_comparison.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/abbreviated.h"
#include "common/labels.h"
#include "common/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/dynamic_message.h"
#include "gpuprobe/v1/param_spec.pb.h"
#include "server/measure/comparison.h"
#include "server/probes/job_events.h"

namespace gpuprobe {
namespace {

constexpr double kDefaultThreshold = 0.02;

// The device model a job ran on: its description up to the first " (" ("NVIDIA H200",
// "cpu").
std::string Model(const v1::Job& job) {
  const std::string& d = job.device();
  return d.substr(0, d.find(" ("));
}

constexpr int kDefaultHistory = 8;

// "label:KEY=VALUE[,KEY2=VALUE2]": the newest `limit` succeeded jobs with those labels, other than
// the candidate, that `matches` (their probe, and what they measured, are the candidate's), newest
// first. NOT_FOUND names `what` when there is none.
absl::StatusOr<std::vector<v1::Job>> HistoryByLabel(
    JobManager& manager, const std::string& base, const v1::Job& candidate, int limit,
    const std::function<bool(const v1::Job&)>& matches, const std::string& what) {
  v1::ListJobsRequest list;
  if (!ParseLabels("base", base.substr(6), *list.mutable_labels()).ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "base: \"%s\" is neither a job id nor label:KEY=VALUE[,KEY2=VALUE2]", Abbreviated(base)));
  }
  list.add_states(v1::JOB_STATE_SUCCEEDED);
  list.set_page_size(100);
  std::vector<v1::Job> history;
  for (int page = 0; page < 100; ++page) {
    ASSIGN_OR_RETURN(v1::ListJobsResponse jobs, manager.List(list));
    for (const v1::Job& job : jobs.jobs()) {
      if (job.id() == candidate.id() || Model(job) != Model(candidate) || !matches(job)) continue;
      history.push_back(job);
      if (static_cast<int>(history.size()) == limit) return history;
    }
    if (jobs.next_page_token().empty()) break;
    list.set_page_token(jobs.next_page_token());
  }
  if (history.empty()) {
    return absl::NotFoundError(
        absl::StrFormat("base: no succeeded %s labelled %s", what, Abbreviated(base.substr(6))));
  }
  return history;
}

double GeometricMean(const std::vector<double>& values) {
  double log_sum = 0.0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

// A resolved spec without the fields that change how a job was sampled, or which arms it ran,
// not what each arm measured.
google::protobuf::Any Comparable(const google::protobuf::Any& resolved,
                                 const google::protobuf::Message& prototype) {
  std::unique_ptr<google::protobuf::Message> spec(prototype.New());
  if (!resolved.UnpackTo(spec.get())) return resolved;
  const google::protobuf::Descriptor& d = *spec->GetDescriptor();
  for (const char* field :
       {"reps", "seed", "order", "require_clean", "precision", "max_seconds", "blocks"}) {
    if (const google::protobuf::FieldDescriptor* f = d.FindFieldByName(field)) {
      spec->GetReflection()->ClearField(spec.get(), f);
    }
  }
  // Arms are matched by their axes: the fields that only choose them may differ.
  for (int i = 0; i < d.field_count(); ++i) {
    if (d.field(i)->options().GetExtension(v1::param).selects_arms()) {
      spec->GetReflection()->ClearField(spec.get(), d.field(i));
    }
  }
  google::protobuf::Any out;
  out.PackFrom(*spec);
  return out;
}

// The first field in which x and y (of one type) differ, as a dotted path into their nested
// messages ("geometry.hidden"); empty when none does.
std::string FirstDifference(const google::protobuf::Message& x,
                            const google::protobuf::Message& y) {
  const google::protobuf::Descriptor& d = *x.GetDescriptor();
  const google::protobuf::Reflection& rx = *x.GetReflection();
  const google::protobuf::Reflection& ry = *y.GetReflection();
  for (int i = 0; i < d.field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d.field(i);
    if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE && !f->is_repeated()) {
      if (rx.HasField(x, f) != ry.HasField(y, f)) return f->name();
      if (!rx.HasField(x, f)) continue;
      const std::string inner = FirstDifference(rx.GetMessage(x, f), ry.GetMessage(y, f));
      if (!inner.empty()) return absl::StrCat(f->name(), ".", inner);
      continue;
    }
    // The field alone on each side, compared as bytes.
    std::unique_ptr<google::protobuf::Message> xf(x.New()), yf(y.New());
    xf->CopyFrom(x);
    yf->CopyFrom(y);
    for (int j = 0; j < d.field_count(); ++j) {
      if (j == i) continue;
      xf->GetReflection()->ClearField(xf.get(), d.field(j));
      yf->GetReflection()->ClearField(yf.get(), d.field(j));
    }
    if (xf->SerializeAsString() != yf->SerializeAsString()) return f->name();
  }
  return "";
}

// The first field in which two resolved specs of one probe differ beyond sampling and the arms
// they chose; empty when none.
std::string SpecMismatch(const v1::Job& a, const v1::Job& b) {
  const google::protobuf::Message* prototype =
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(
          google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(
              a.resolved().type_url().substr(a.resolved().type_url().rfind('/') + 1)));
  if (prototype == nullptr) return "resolved";
  std::unique_ptr<google::protobuf::Message> x(prototype->New()), y(prototype->New());
  if (!Comparable(a.resolved(), *prototype).UnpackTo(x.get()) ||
      !Comparable(b.resolved(), *prototype).UnpackTo(y.get())) {
    return "resolved";
  }
  return FirstDifference(*x, *y);
}

// An arm's identity: its axes, serialized.
std::string AxesKey(const v1::Result& r) {
  std::string key;
  for (const v1::AxisValue& a : r.axes()) key += a.SerializeAsString() + '\n';
  return key;
}

// Generic results of a job's last attempt, by their axes.
absl::StatusOr<std::map<std::string, v1::Result>> ResultsByAxes(JobManager& manager,
                                                                const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<v1::JobEvent> results, manager.Results(id));
  std::map<std::string, v1::Result> by_axes;
  for (const v1::JobEvent& e : results) {
    if (e.has_result()) by_axes[AxesKey(e.result())] = e.result();
  }
  return by_axes;
}

// The metrics an arm's comparison sums: its times (unit "us"), or, where it declares none (an
// operator's command, whose columns carry no unit), its first metric, read as a time.
std::vector<const v1::MetricStats*> ComparedMetrics(const v1::Result& r) {
  std::vector<const v1::MetricStats*> metrics;
  for (const v1::MetricStats& m : r.metrics()) {
    if (m.unit() == "us") metrics.push_back(&m);
  }
  if (metrics.empty() && r.metrics_size() > 0) metrics.push_back(&r.metrics(0));
  return metrics;
}

std::vector<std::vector<double>> MetricSamples(const v1::Result& r) {
  std::vector<std::vector<double>> samples;
  for (const v1::MetricStats* m : ComparedMetrics(r)) {
    samples.emplace_back(m->samples().begin(), m->samples().end());
  }
  return samples;
}

double SumOfMedians(const v1::Result& r) {
  double sum = 0.0;
  for (const v1::MetricStats* m : ComparedMetrics(r)) sum += m->median();
  return sum;
}

void Tally(Verdict verdict, v1::CompareJobsResponse& response) {
  switch (verdict) {
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

void SetEstimate(const RatioEstimate& r, v1::ArmComparison& arm,
                 v1::CompareJobsResponse& response) {
  arm.set_ratio(r.ratio);
  arm.set_ratio_low(r.low);
  arm.set_ratio_high(r.high);
  arm.set_verdict(VerdictToProto(r.verdict));
  Tally(r.verdict, response);
}

// What a candidate is compared with: one job named by id (the noise within the two jobs), or
// the history of a label (the noise between jobs).
struct Baseline {
  std::vector<v1::Job> jobs;  // newest first
  bool history = false;
};

// The baseline `request` names: its history when a label (matching jobs that `matches`), else
// the job.
absl::StatusOr<Baseline> ResolveBase(JobManager& manager, const v1::CompareJobsRequest& request,
                                     const v1::Job& candidate,
                                     const std::function<bool(const v1::Job&)>& matches,
                                     const std::string& what) {
  if (!absl::StartsWith(request.base(), "label:")) {
    ASSIGN_OR_RETURN(v1::Job job, manager.Get(request.base()));
    return Baseline{.jobs = {std::move(job)}, .history = false};
  }
  const int limit = request.history() == 0 ? kDefaultHistory : static_cast<int>(request.history());
  ASSIGN_OR_RETURN(std::vector<v1::Job> jobs,
                   HistoryByLabel(manager, request.base(), candidate, limit, matches, what));
  return Baseline{.jobs = std::move(jobs), .history = true};
}

// The response's header: the jobs, the threshold, and how the intervals were made.
v1::CompareJobsResponse Header(const Baseline& base, const v1::Job& candidate,
                               const ComparisonOptions& options) {
  v1::CompareJobsResponse response;
  response.set_base_job_id(base.jobs.front().id());
  response.set_candidate_job_id(candidate.id());
  response.set_threshold(options.threshold);
  response.set_confidence(options.confidence);
  if (!base.history) {
    response.set_method("one job");
    response.set_note(
        "the base is one job: the intervals hold the noise within the two jobs, not the noise "
        "between jobs; name a label for a history");
    return response;
  }
  for (const v1::Job& job : base.jobs) response.add_history_job_ids(job.id());
  const int n = static_cast<int>(base.jobs.size());
  if (n < options.min_history) {
    response.set_method("too little history");
    response.set_note(
        absl::StrFormat("unsure: %d baseline job%s; job-to-job noise unknown (at "
                        "least %d needed)",
                        n, n == 1 ? "" : "s", options.min_history));
  } else {
    response.set_method("history");
  }
  return response;
}

// The arm `key` in each baseline job that has it (newest first).
template <typename Key, typename Value>
std::vector<const Value*> InEachJob(const std::vector<std::map<Key, Value>>& jobs, const Key& key) {
  std::vector<const Value*> found;
  for (const auto& arms : jobs) {
    if (auto f = arms.find(key); f != arms.end()) found.push_back(&f->second);
  }
  return found;
}

// Judges one arm: against the newest baseline job's reps (`one_job`, the base's value
// `values[0]`), or against the history of `values`, one per baseline job.
void JudgeArm(const Baseline& base, const std::vector<double>& values, double candidate,
              const std::function<RatioEstimate()>& one_job, const ComparisonOptions& options,
              v1::ArmComparison& arm, v1::CompareJobsResponse& response) {
  arm.set_candidate_section_us(candidate);
  if (!base.history) {
    arm.set_base_section_us(values.front());
    SetEstimate(one_job(), arm, response);
    return;
  }
  const RatioEstimate r = CompareWithHistory(values, candidate, options);
  arm.set_base_section_us(r.ratio > 0 ? candidate / r.ratio : 0.0);  // their geometric mean
  SetEstimate(r, arm, response);
}

// Says how the arms were judged where `blocks_judged` of them were judged by the two jobs'
// blocks.
void NoteBlocks(int blocks_judged, const ComparisonOptions& options,
                v1::CompareJobsResponse& response) {
  if (blocks_judged == response.arms_size() && blocks_judged > 0) {
    response.set_method("blocks");
    response.set_note(
        "every arm judged by the two jobs' blocks: the intervals hold the noise between "
        "placements of the inputs, not what changes between days or hosts; name a label for a "
        "history");
  } else if (blocks_judged > 0) {
    response.set_method("blocks and reps");
    response.set_note(absl::StrFormat(
        "%d of %d arms judged by the two jobs' blocks (the noise between placements of the "
        "inputs); the others, with fewer than %d blocks in a job, by their reps (the noise "
        "within the two jobs only)",
        blocks_judged, response.arms_size(), options.min_blocks));
  }
}

}  // namespace

namespace {

// Two jobs of a probe with generic results: arm by arm (matched by their axes), the sum of the
// metrics' medians, when both ran the same spec but for how they were sampled.
absl::StatusOr<v1::CompareJobsResponse> CompareResults(JobManager& manager,
                                                       const v1::CompareJobsRequest& request,
                                                       const v1::Job& candidate,
                                                       const ComparisonOptions& options) {
  auto succeeded = [](const char* field, const v1::Job& job) -> absl::Status {
    if (job.check() || job.state() != v1::JOB_STATE_SUCCEEDED) {
      return absl::FailedPreconditionError(
          absl::StrFormat("%s: %s is a %s%s %s; compare succeeded timed jobs", field, job.id(),
                          job.probe(), job.check() ? " check" : "",
                          absl::AsciiStrToLower(v1::JobState_Name(job.state()).substr(10))));
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(succeeded("candidate", candidate));
  ASSIGN_OR_RETURN(const Baseline base,
                   ResolveBase(
                       manager, request, candidate,
                       [&](const v1::Job& job) {
                         return job.probe() == candidate.probe() && !job.check() &&
                                SpecMismatch(job, candidate).empty();
                       },
                       absl::StrCat(candidate.probe(), " job with the candidate's parameters")));
  const v1::Job& newest = base.jobs.front();
  RETURN_IF_ERROR(succeeded("base", newest));
  if (newest.probe() != candidate.probe()) {
    return absl::InvalidArgumentError(absl::StrFormat("probe: %s ran %s, %s ran %s", newest.id(),
                                                      newest.probe(), candidate.id(),
                                                      candidate.probe()));
  }
  if (Model(newest) != Model(candidate)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("device: %s ran on %s, %s on %s; compare jobs of one device model",
                        newest.id(), Model(newest), candidate.id(), Model(candidate)));
  }
  if (const std::string field = SpecMismatch(newest, candidate); !field.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s and %s differ in %s; compare jobs that measured the same", field,
                        newest.id(), candidate.id(), field));
  }
  std::vector<std::map<std::string, v1::Result>> base_results;
  for (const v1::Job& job : base.jobs) {
    ASSIGN_OR_RETURN(base_results.emplace_back(), ResultsByAxes(manager, job.id()));
  }
  ASSIGN_OR_RETURN(auto candidate_results, ResultsByAxes(manager, candidate.id()));
  v1::CompareJobsResponse response = Header(base, candidate, options);
  std::vector<const v1::Result*> ordered;
  for (const auto& [key, cand] : candidate_results) ordered.push_back(&cand);
  std::sort(ordered.begin(), ordered.end(), [](const v1::Result* a, const v1::Result* b) {
    return a->arm_index() < b->arm_index();
  });
  int blocks_judged = 0;
  for (const v1::Result* cand : ordered) {
    const std::vector<const v1::Result*> found = InEachJob(base_results, AxesKey(*cand));
    if (found.empty()) continue;
    v1::ArmComparison* arm = response.add_arms();
    *arm->mutable_axes() = cand->axes();
    const std::vector<const v1::MetricStats*> compared = ComparedMetrics(*cand);
    arm->set_quantity(compared.size() == 1 ? compared[0]->name() : "section_us");
    const std::vector<double> base_blocks(found.front()->block_section_us().begin(),
                                          found.front()->block_section_us().end());
    const std::vector<double> cand_blocks(cand->block_section_us().begin(),
                                          cand->block_section_us().end());
    if (!base.history && static_cast<int>(base_blocks.size()) >= options.min_blocks &&
        static_cast<int>(cand_blocks.size()) >= options.min_blocks) {
      // Both jobs sampled several placements: judged, and shown, by their blocks.
      ++blocks_judged;
      JudgeArm(
          base, {GeometricMean(base_blocks)}, GeometricMean(cand_blocks),
          [&] { return CompareBlocks(base_blocks, cand_blocks, options); }, options, *arm,
          response);
      continue;
    }
    std::vector<double> values;
    for (const v1::Result* r : found) values.push_back(SumOfMedians(*r));
    JudgeArm(
        base, values, SumOfMedians(*cand),
        [&] { return CompareSums(MetricSamples(*found.front()), MetricSamples(*cand), options); },
        options, *arm, response);
  }
  NoteBlocks(blocks_judged, options, response);
  return response;
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
  if (request.history() > 1000) {
    return absl::InvalidArgumentError(
        absl::StrFormat("history: %d is more than 1000 jobs", request.history()));
  }
  if (request.base().empty()) {
    return absl::InvalidArgumentError("base: missing (a job id, or label:KEY=VALUE)");
  }
  if (request.candidate().empty())
    return absl::InvalidArgumentError("candidate: missing (a job id)");
  if (request.base() == request.candidate()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "candidate: %s is the base job itself; compare two jobs", request.candidate()));
  }
  ASSIGN_OR_RETURN(v1::Job candidate, manager.Get(request.candidate()));
  return CompareResults(manager, request, candidate, options);
}

}  // namespace gpuprobe
