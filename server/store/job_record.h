// What both job stores share above SQL: a job row's columns and their proto, the scoped form of
// idempotency keys, and the validation of ListJobs filters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

// The columns every job query selects, in this order (kJobColumns).
inline constexpr char kJobColumns[] =
    "seq, id, state, request, priority, submitter, created_us, started_us, finished_us, device, "
    "error_code, error_message, attempts, results, device_index, telemetry, host, probe, "
    "resolved, is_check";

// One row of kJobColumns. Requests and telemetry are serialized protos; times Unix microseconds.
struct JobColumns {
  int64_t seq = 0;
  std::string id;
  int64_t state = 0;
  std::string request;
  int64_t priority = 0;
  std::string submitter;
  int64_t created_us = 0;
  std::optional<int64_t> started_us, finished_us;
  std::string device;
  int64_t error_code = 0;
  std::string error_message;
  int64_t attempts = 0, results = 0;
  std::optional<int64_t> device_index;
  std::optional<std::string> telemetry;
  std::string host;
  std::string probe;  // '' for jobs stored before schema 6: moe-union, by their request
  std::optional<std::string> resolved;  // a serialized google.protobuf.Any; unset before schema 6
  bool check = false;
};

// A row's job. A request that cannot be parsed leaves the request empty and the job shown as
// FAILED with DATA_LOSS, so that one damaged record never fails a whole listing.
v1::Job JobFromColumns(const JobColumns& row);

// True for a job JobFromColumns found damaged.
bool HasCorruptRequest(const v1::Job& job);
inline constexpr char kCorruptRequest[] =
    "the stored request cannot be read (a damaged record); the job was failed";

// Idempotency keys are unique per scope: the column holds the key, or (scoped) the scope, a
// newline and the key. Unscoped keys keep the form schema 2 stored.
std::string ScopedKey(const std::string& scope, const std::string& key);

// Whether the event is one of a job's results (a result, a check), as
// Job.results counts them.
inline bool IsResultEvent(const v1::JobEvent& e) { return e.has_check() || e.has_result(); }

// Whether a job in this state has ended.
inline bool IsTerminal(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED;
}

// The request's labels (a probe request's, a sweep's or a check's).
const google::protobuf::Map<std::string, std::string>& LabelsOf(const v1::SubmitRequest& r);

// A ListJobsRequest checked against its fields' domains: page size (default 50, at most 1000)
// and the seq the page starts below.
struct ListPage {
  int64_t size = 50;
  int64_t before_seq = INT64_MAX;
};
absl::StatusOr<ListPage> CheckListRequest(const v1::ListJobsRequest& request);

// The message for a job's attempt that lost its lease (ABORTED).
std::string LeaseLost(const std::string& id, int attempt);

}  // namespace gpuprobe
