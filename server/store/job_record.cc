#include "server/store/job_record.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/time_util.h"

namespace gpuprobe {
namespace {

using google::protobuf::util::TimeUtil;

// More label filters than any dashboard needs would only make the query deep.
constexpr int kMaxLabelFilters = 16;

constexpr char kCorruptTelemetry[] =
    "none: the stored telemetry summary cannot be read (a damaged record)";

google::protobuf::Timestamp Micros(int64_t us) { return TimeUtil::MicrosecondsToTimestamp(us); }

}  // namespace

v1::Job JobFromColumns(const JobColumns& row) {
  v1::Job job;
  job.set_id(row.id);
  job.set_state(static_cast<v1::JobState>(row.state));
  const bool request_ok = job.mutable_request()->ParseFromString(row.request);
  job.set_submitter(row.submitter);
  *job.mutable_created_at() = Micros(row.created_us);
  if (row.started_us) *job.mutable_started_at() = Micros(*row.started_us);
  if (row.finished_us) *job.mutable_finished_at() = Micros(*row.finished_us);
  job.set_device(row.device);
  job.set_error_code(static_cast<int32_t>(row.error_code));
  job.set_error_message(row.error_message);
  job.set_attempts(static_cast<uint32_t>(row.attempts));
  job.set_results(static_cast<uint32_t>(row.results));
  if (row.device_index) job.set_device_index(static_cast<uint32_t>(*row.device_index));
  if (row.telemetry && !job.mutable_telemetry()->ParseFromString(*row.telemetry)) {
    job.clear_telemetry();
    job.mutable_telemetry()->set_note(kCorruptTelemetry);
  }
  job.set_host(row.host);
  // Jobs stored before schema 6 are moe-union's, a check where their request is one.
  job.set_probe(row.probe);
  // A moe-union check stored before schema 6 has no is_check: its request says it.
  job.set_check(row.check || job.request().has_check());
  if (row.resolved && !job.mutable_resolved()->ParseFromString(*row.resolved)) {
    job.clear_resolved();
  }
  if (!request_ok) {
    job.clear_request();
    job.set_state(v1::JOB_STATE_FAILED);
    job.set_error_code(static_cast<int32_t>(absl::StatusCode::kDataLoss));
    job.set_error_message(kCorruptRequest);
  }
  return job;
}

bool HasCorruptRequest(const v1::Job& job) {
  return job.error_code() == static_cast<int32_t>(absl::StatusCode::kDataLoss) &&
         job.error_message() == kCorruptRequest;
}

std::string ScopedKey(const std::string& scope, const std::string& key) {
  return scope.empty() ? key : absl::StrCat(scope, "\n", key);
}

const google::protobuf::Map<std::string, std::string>& LabelsOf(const v1::SubmitRequest& r) {
  return r.has_probe()   ? r.probe().labels()
         : r.has_check() ? r.check().labels()
                         : r.sweep().labels();
}

absl::StatusOr<ListPage> CheckListRequest(const v1::ListJobsRequest& request) {
  ListPage page;
  if (request.page_size() != 0) page.size = std::min<int64_t>(request.page_size(), 1000);
  if (!request.page_token().empty() &&
      (!absl::SimpleAtoi(request.page_token(), &page.before_seq) || page.before_seq < 1)) {
    return absl::InvalidArgumentError("page_token: not a token this server returned");
  }
  for (int state : request.states()) {
    if (state == v1::JOB_STATE_UNSPECIFIED || !v1::JobState_IsValid(state)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("states: %d is not a job state (1..%d)", state, v1::JobState_MAX));
    }
  }
  for (const auto* t : {&request.created_after(), &request.created_before()}) {
    if (t->seconds() < TimeUtil::kTimestampMinSeconds ||
        t->seconds() > TimeUtil::kTimestampMaxSeconds) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "created_after/created_before: %d s is outside 0001-01-01..9999-12-31", t->seconds()));
    }
    if (t->nanos() < 0 || t->nanos() > 999'999'999) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "created_after/created_before: nanos %d is outside 0..999999999", t->nanos()));
    }
  }
  if (request.labels().size() > kMaxLabelFilters) {
    return absl::InvalidArgumentError(absl::StrFormat("labels: %d label filters; at most %d",
                                                      request.labels().size(), kMaxLabelFilters));
  }
  return page;
}

std::string LeaseLost(const std::string& id, int attempt) {
  return absl::StrFormat(
      "job %s: attempt %d is no longer the job's running attempt (its lease expired and the job "
      "was queued again)",
      id, attempt);
}

}  // namespace gpuprobe
