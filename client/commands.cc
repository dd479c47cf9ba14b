#include "client/commands.h"

#include <iostream>

#include "absl/strings/str_format.h"
#include "client/artifact_download.h"
#include "client/check_printer.h"
#include "client/exit_codes.h"
#include "client/flag_groups.h"
#include "client/interrupt.h"
#include "client/job_identity.h"
#include "client/job_stream.h"
#include "client/probe_commands.h"
#include "client/subcommands.h"
#include "client/sweep_request_flags.h"
#include "common/api_json.h"
#include "common/identifiers.h"

namespace gpuprobe {

int SweepCommand(const ClientContext& context) {
  absl::StatusOr<v1::SweepRequest> request = SweepRequestFromFlags(*context.flags, ProcessEnv());
  if (!request.ok()) return UsageError(request.status());
  v1::SubmitRequest submit;
  *submit.mutable_sweep() = *std::move(request);
  return SubmitAndFollow(context, submit);
}

int CheckCommand(const ClientContext& context) {
  absl::StatusOr<v1::CheckRequest> request = CheckRequestFromFlags(*context.flags, ProcessEnv());
  if (!request.ok()) return UsageError(request.status());
  const std::string dump = context.flags->dump;
  if (absl::Status s = CheckDumpDir(dump); !s.ok()) return UsageError(s);
  absl::StatusOr<std::unique_ptr<CheckPrinter>> printer =
      MakeCheckPrinter(context.format, std::cout);
  if (!printer.ok()) return UsageError(printer.status());
  auto stub = v1::ProbeService::NewStub(context.channel);
  grpc::ClientContext rpc;
  context.Prepare(rpc);
  if (!context.flags->idempotency_key.empty()) {
    rpc.AddMetadata(kIdempotencyKeyMetadata, context.flags->idempotency_key);
  }
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> stream = stub->Check(&rpc, *request);
  CancelOnInterrupt cancel(context, rpc);
  CheckPrinter& p = **printer;
  std::string job_id;
  const int exit_code = StreamJob(
      context, *stream,
      {.accepted =
           [&](const v1::JobAccepted& e) {
             job_id = e.job_id();
             TellAccepted(e);
             cancel.Known(job_id);
             p.Identify(
                 {.job_id = job_id, .probe = "moe-union", .labels = LabelsText(request->labels())});
           },
       .started = [&](const v1::JobStarted& e) { p.Started(e); },
       .check = [&](const v1::KernelCheck& e) { p.Check(e); },
       .finished = [&](const v1::JobFinished& e) { p.Finished(e); }});
  // A failed check's dump is the evidence: fetch it whenever the job ran.
  if (dump.empty() || job_id.empty()) return exit_code;
  const int fetched = DownloadArtifacts(context, job_id, dump);
  return exit_code != kExitOk ? exit_code : fetched;
}

int InfoCommand(const ClientContext& context) {
  if (context.format == "csv" || context.format == "tsv") {
    return UsageError(absl::InvalidArgumentError(absl::StrFormat(
        "--format: info prints table or json, not %s (no rows to tabulate)", context.format)));
  }
  auto stub = v1::ProbeService::NewStub(context.channel);
  grpc::ClientContext rpc;
  context.Prepare(rpc);
  rpc.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ServerInfo info;
  const grpc::Status status = stub->GetServerInfo(&rpc, v1::GetServerInfoRequest(), &info);
  if (!status.ok()) return ReportRpcError(context, status);
  if (context.format == "json") {  // protobuf's JSON mapping of gpuprobe.v1.ServerInfo
    std::cout << ApiJson(info) << "\n";
    return kExitOk;
  }
  const v1::DeviceDetails& d = info.details();
  std::cout << absl::StrFormat(
      "server       %s\nversion      %s\nbackend      %s\ndevice       %s\nmemory       "
      "%.2f GiB for sweeps\nqueue depth  %d\n",
      context.server, info.version(), info.backend(), info.device(),
      info.device_memory_bytes() / double(1 << 30), info.queue_depth());
  for (const v1::DeviceStatus& device : info.devices()) {
    std::cout << absl::StrFormat(
        "device %-5d %s | %s | %d pinned queued\n", device.index(), device.description(),
        device.running_job_id().empty() ? "idle" : "running " + device.running_job_id(),
        device.pinned_queue_depth());
  }
  if (!info.store().empty()) {
    std::cout << absl::StrFormat("host         %s (%s store)\n", info.host(), info.store());
  }
  // A fleet (a shared store): every daemon's devices, this one's included.
  if (info.store() == "postgresql") {
    for (const v1::FleetDevice& f : info.fleet()) {
      std::cout << absl::StrFormat(
          "fleet        %s device %d: %s | %s | %s\n", f.host(), f.index(), f.model(), f.state(),
          f.running_job_id().empty() ? "idle" : "running " + f.running_job_id());
    }
  }
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

Subcommand SweepSubcommand() {
  return {.name = "sweep",
          .help = "run a MoE union sweep, printing its rows as they stream in",
          .bind =
              [](CLI::App& app, ClientFlags& f, std::vector<std::string>&) {
                SweepFlags(app, f);
                IdempotencyKeyFlag(app, f);
              },
          .run = [](const ClientContext& c,
                    const std::vector<std::string>&) { return SweepCommand(c); }};
}

Subcommand CheckSubcommand() {
  return {.name = "check",
          .help = "exactness of every kernel variant against the float64 reference",
          .bind =
              [](CLI::App& app, ClientFlags& f, std::vector<std::string>&) {
                CheckFlags(app, f);
                IdempotencyKeyFlag(app, f);
              },
          .run = [](const ClientContext& c,
                    const std::vector<std::string>&) { return CheckCommand(c); }};
}

Subcommand InfoSubcommand() {
  return {.name = "info",
          .help = "describe the server, its devices and its fleet",
          .bind = [](CLI::App&, ClientFlags&, std::vector<std::string>&) {},
          .run = [](const ClientContext& c,
                    const std::vector<std::string>&) { return InfoCommand(c); }};
}

}  // namespace gpuprobe
