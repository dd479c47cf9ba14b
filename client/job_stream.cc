#include "client/job_stream.h"

#include <unistd.h>

#include <iostream>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "client/exit_codes.h"
#include "client/proto_names.h"
#include "common/daemon_unavailable.h"

namespace gpuprobe {
namespace {

// "\r" rewrites one stderr line while the job runs; Clear() erases it before rows print.
class ProgressLine {
 public:
  ProgressLine() : enabled_(isatty(STDERR_FILENO) == 1) {}

  void Show(const std::string& text) {
    if (!enabled_) return;
    std::cerr << "\r\033[K" << text << std::flush;
    shown_ = true;
  }
  void Clear() {
    if (!shown_) return;
    std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  const bool enabled_;
  bool shown_ = false;
};

}  // namespace

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
  return status.error_code() == grpc::StatusCode::CANCELLED ? kExitCancelled : kExitJobFailed;
}

int StreamJob(const ClientContext& context, grpc::ClientReader<v1::JobEvent>& stream,
              const EventHandlers& on) {
  ProgressLine progress;
  int arms = 0, results = 0;
  std::string job_id;
  std::optional<v1::JobFinished> finished;
  v1::JobEvent event;
  while (stream.Read(&event)) {
    switch (event.event_case()) {
      case v1::JobEvent::kAccepted:
        job_id = event.accepted().job_id();
        on.accepted(event.accepted());
        progress.Show(
            absl::StrFormat("job %s queued, %d ahead", job_id, event.accepted().queue_position()));
        break;
      case v1::JobEvent::kStarted:
        arms = event.started().arms_size() > 0 ? event.started().arms_size()
                                               : event.started().sweep().arms_size();
        progress.Clear();
        on.started(event.started());
        break;
      case v1::JobEvent::kProgress:
        progress.Show(absl::StrFormat("job %s: rep %d/%d, arms done %d/%d, %.1f s", job_id,
                                      event.progress().reps_done(), event.progress().reps_total(),
                                      results, arms, event.progress().elapsed_s()));
        break;
      case v1::JobEvent::kRow:
        progress.Clear();
        ++results;
        on.row(event.row());
        break;
      case v1::JobEvent::kCheck:
        ++results;
        on.check(event.check());
        break;
      case v1::JobEvent::kResult:
        progress.Clear();
        ++results;
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
