#include "client/commands.h"

#include <unistd.h>

#include <functional>
#include <iostream>

#include "absl/strings/str_format.h"
#include "client/check_printer.h"
#include "client/exit_codes.h"
#include "client/sweep_printer.h"
#include "client/sweep_request_flags.h"

namespace gpuprobe {
namespace {

int ReportRpcError(const ClientContext& context, const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    std::cerr << "gpuprobe: cannot reach gpuprobed at " << context.server << ": "
              << status.error_message() << "\n";
    return kExitUnreachable;
  }
  std::cerr << "gpuprobe: " << status.error_message() << "\n";
  return status.error_code() == grpc::StatusCode::CANCELLED ? kExitCancelled : kExitJobFailed;
}

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

// What a command does with each kind of event; the loop below handles progress and status.
struct EventHandlers {
  std::function<void(const v1::JobStarted&)> started;
  std::function<void(const v1::Row&)> row;
  std::function<void(const v1::KernelCheck&)> check;
  std::function<void(const v1::JobFinished&)> finished;
};

int StreamJob(const ClientContext& context, grpc::ClientReader<v1::JobEvent>& stream,
              const EventHandlers& on) {
  ProgressLine progress;
  int arms = 0, results = 0;
  std::string job_id;
  v1::JobEvent event;
  while (stream.Read(&event)) {
    switch (event.event_case()) {
      case v1::JobEvent::kAccepted:
        job_id = event.accepted().job_id();
        progress.Show(absl::StrFormat("job %s queued, %d ahead", job_id,
                                      event.accepted().queue_position()));
        break;
      case v1::JobEvent::kStarted:
        arms = event.started().sweep().arms_size();
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
      case v1::JobEvent::kFinished:
        progress.Clear();
        on.finished(event.finished());
        break;
      case v1::JobEvent::EVENT_NOT_SET:
        break;
    }
  }
  progress.Clear();
  const grpc::Status status = stream.Finish();
  return status.ok() ? kExitOk : ReportRpcError(context, status);
}

int UsageError(const absl::Status& status) {
  std::cerr << "gpuprobe: " << status.message() << "\n";
  return kExitUsage;
}

}  // namespace

int SweepCommand(const ClientContext& context) {
  absl::StatusOr<v1::SweepRequest> request = SweepRequestFromFlags(ProcessEnv());
  if (!request.ok()) return UsageError(request.status());
  absl::StatusOr<std::unique_ptr<SweepPrinter>> printer =
      MakeSweepPrinter(context.format, std::cout);
  if (!printer.ok()) return UsageError(printer.status());
  auto stub = v1::ProbeService::NewStub(context.channel);
  grpc::ClientContext rpc;
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> stream = stub->Run(&rpc, *request);
  SweepPrinter& p = **printer;
  return StreamJob(context, *stream,
                   {.started = [&](const v1::JobStarted& e) { p.Started(e); },
                    .row = [&](const v1::Row& e) { p.Row(e); },
                    .check = [](const v1::KernelCheck&) {},
                    .finished = [&](const v1::JobFinished& e) { p.Finished(e); }});
}

int CheckCommand(const ClientContext& context) {
  absl::StatusOr<v1::CheckRequest> request = CheckRequestFromFlags(ProcessEnv());
  if (!request.ok()) return UsageError(request.status());
  absl::StatusOr<std::unique_ptr<CheckPrinter>> printer =
      MakeCheckPrinter(context.format, std::cout);
  if (!printer.ok()) return UsageError(printer.status());
  auto stub = v1::ProbeService::NewStub(context.channel);
  grpc::ClientContext rpc;
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> stream = stub->Check(&rpc, *request);
  CheckPrinter& p = **printer;
  return StreamJob(context, *stream,
                   {.started = [&](const v1::JobStarted& e) { p.Started(e); },
                    .row = [](const v1::Row&) {},
                    .check = [&](const v1::KernelCheck& e) { p.Check(e); },
                    .finished = [&](const v1::JobFinished& e) { p.Finished(e); }});
}

int InfoCommand(const ClientContext& context) {
  auto stub = v1::ProbeService::NewStub(context.channel);
  grpc::ClientContext rpc;
  rpc.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ServerInfo info;
  const grpc::Status status = stub->GetServerInfo(&rpc, v1::GetServerInfoRequest(), &info);
  if (!status.ok()) return ReportRpcError(context, status);
  const v1::DeviceDetails& d = info.details();
  std::cout << absl::StrFormat(
      "server       %s\nversion      %s\nbackend      %s\ndevice       %s\nmemory       "
      "%.2f GiB for sweeps\nqueue depth  %d\n",
      context.server, info.version(), info.backend(), info.device(),
      info.device_memory_bytes() / double(1 << 30), info.queue_depth());
  if (d.calibrated_read_tbps() > 0) {
    std::cout << absl::StrFormat(
        "cuda         driver %d.%d, runtime %d.%d\nread bw      %.3f TB/s (streaming read of "
        "%.1f GiB, measured at start-up)\n",
        d.driver_version() / 1000, d.driver_version() % 1000 / 10, d.runtime_version() / 1000,
        d.runtime_version() % 1000 / 10, d.calibrated_read_tbps(),
        d.calibration_bytes() / double(1 << 30));
  }
  return kExitOk;
}

}  // namespace gpuprobe
