#include "client/job_stream.h"

#include <iostream>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "client/exit_codes.h"
#include "client/progress_line.h"
#include "client/proto_names.h"
#include "common/daemon_unavailable.h"

namespace gpuprobe {

void TellAccepted(const v1::JobAccepted& accepted) {
  std::cerr << absl::StrFormat("gpuprobe: job %s queued, %d ahead\n", accepted.job_id(),
                               accepted.queue_position());
}

void TellEnding(const std::string& job_id, const v1::JobEnding& ending) {
  std::cerr << "gpuprobe: job " << job_id << " " << StateName(ending.finished().state()) << ", but "
            << ending.reason() << "; waiting for it\n";
}

int ReportRpcError(const ClientContext& context, const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    const std::string& message = status.error_message();
    if (IsDaemonUnavailable(message)) {
      std::cerr << "gpuprobe: gpuprobed at " << context.server
                << " answered, but cannot serve now: "
                << message.substr(kDaemonUnavailablePrefix.size()) << "\n";
    } else {
      std::cerr << "gpuprobe: cannot reach gpuprobed at " << context.server << ": " << message
                << "\n";
    }
    return kExitUnreachable;
  }
  std::cerr << "gpuprobe: " << status.error_message() << "\n";
  switch (status.error_code()) {
    case grpc::StatusCode::CANCELLED:
      return kExitCancelled;
    case grpc::StatusCode::INVALID_ARGUMENT:
      return kExitUsage;
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      return kExitNotAllowed;
    default:
      return kExitJobFailed;
  }
}

int StreamJob(const ClientContext& context, grpc::ClientReader<v1::JobEvent>& stream,
              const EventHandlers& on, const std::string& known_job_id) {
  ProgressLine progress;
  std::string job_id = known_job_id;
  std::optional<v1::JobFinished> finished;
  v1::JobEvent event;
  while (stream.Read(&event)) {
    switch (event.event_case()) {
      case v1::JobEvent::kAccepted:
        job_id = event.accepted().job_id();
        on.accepted(event.accepted());
        progress.Show(absl::StrFormat("job %s queued", job_id));
        break;
      case v1::JobEvent::kStarted:
        progress.Clear();
        on.started(event.started());
        break;
      case v1::JobEvent::kProgress:
        progress.Show(ProgressText(job_id, event.progress()));
        break;
      case v1::JobEvent::kCheck:
        on.check(event.check());
        break;
      case v1::JobEvent::kResult:
        progress.Clear();
        on.result(event.result());
        break;
      case v1::JobEvent::kFinished:
        progress.Clear();
        finished = event.finished();
        on.finished(event.finished());
        break;
      case v1::JobEvent::kEnding:  // the finished event follows once stored: keep waiting
        progress.Clear();
        TellEnding(job_id, event.ending());
        break;
      case v1::JobEvent::kRow:        // sent to v1 clients only: this one asks for results
      case v1::JobEvent::kTelemetry:  // `show` tells the job's summary
      case v1::JobEvent::EVENT_NOT_SET:
        break;
    }
  }
  progress.Clear();
  const grpc::Status status = stream.Finish();
  if (!status.ok()) return ReportRpcError(context, status);
  // A watched job's stream ends OK whatever the job did: its finished event tells.
  if (!finished.has_value()) return kExitOk;
  if (finished->state() != v1::JOB_STATE_SUCCEEDED) {
    std::cerr << "gpuprobe: job " << job_id << " " << StateName(finished->state()) << ": "
              << finished->error_message() << "\n";
  }
  return ExitCodeOf(finished->state());
}

int UsageError(const absl::Status& status) {
  std::cerr << "gpuprobe: " << status.message() << "\n";
  return kExitUsage;
}

}  // namespace gpuprobe
