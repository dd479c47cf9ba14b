// The commands that manage queued jobs: submit, wait, watch, jobs, show, cancel.
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "client/commands.h"
#include "client/csv.h"
#include "client/exit_codes.h"
#include "client/flag_groups.h"
#include "client/job_identity.h"
#include "client/job_printers.h"
#include "client/job_stream.h"
#include "client/probe_commands.h"
#include "client/progress_line.h"
#include "client/proto_names.h"
#include "client/subcommands.h"
#include "client/sweep_request_flags.h"
#include "common/api_json.h"

namespace gpuprobe {
namespace {

std::string When(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0 && t.nanos() == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixSeconds(t.seconds()),
                          absl::UTCTimeZone());
}

// The device over the job, for people: clocks, power, temperature, what disturbed it.
std::string TelemetryLine(const v1::TelemetrySummary& t) {
  if (!t.available()) return "telemetry: " + t.note();
  std::vector<std::string> foreign;
  for (const v1::ForeignProcess& p : t.foreign_processes()) {
    foreign.push_back(absl::StrFormat("%d %s", p.pid(), p.name()));
  }
  return absl::StrFormat(
      "telemetry: %d readings | SM %d/%d/%d MHz (min/median/max) | memory %d-%d MHz | "
      "<= %.0f W, <= %d C | throttle reasons: %s | foreign processes: %s",
      t.samples(), t.sm_mhz_min(), t.sm_mhz_median(), t.sm_mhz_max(), t.memory_mhz_min(),
      t.memory_mhz_max(), t.power_w_max(), t.temperature_c_max(),
      t.throttle_reasons().empty() ? "none" : absl::StrJoin(t.throttle_reasons(), ","),
      foreign.empty() ? "none" : absl::StrJoin(foreign, ", "));
}

grpc::Status FetchJob(const ClientContext& context, v1::ProbeService::Stub& stub,
                      const std::string& job_id, v1::Job* job) {
  grpc::ClientContext rpc;
  context.Prepare(rpc);
  v1::GetJobRequest request;
  request.set_job_id(job_id);
  return stub.GetJob(&rpc, request, job);
}

// submit's, wait's and cancel's stdout: json the job's record (protobuf's JSON mapping of
// gpuprobe.v1.Job, as `jobs` prints each); csv a header and job_id, state, error_message; tsv
// job_id and state; table the id alone (submit's last line; wait prints nothing there).
void PrintJobState(const std::string& format, const v1::Job& job) {
  if (format == "json") {
    std::cout << ApiJson(job) << "\n" << std::flush;
  } else if (format == "csv") {
    std::cout << CsvLine({"job_id", "state", "error_message"})
              << CsvLine({job.id(), StateName(job.state()), job.error_message()}) << std::flush;
  } else if (format == "tsv") {
    std::cout << "job_id\tstate\n"
              << job.id() << "\t" << StateName(job.state()) << "\n"
              << std::flush;
  } else {
    std::cout << job.id() << "\n" << std::flush;
  }
}

bool IsEnded(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED;
}

}  // namespace

int SubmitCommand(const ClientContext& context) {
  v1::SubmitRequest request;
  if (const std::string probe = context.flags->probe; !probe.empty()) {
    absl::StatusOr<v1::ProbeRequest> job = ProbeRequestFromFlags(probe, *context.flags);
    if (!job.ok()) return UsageError(job.status());
    *request.mutable_probe() = *std::move(job);
  } else {
    absl::StatusOr<v1::SweepRequest> sweep = SweepRequestFromFlags(*context.flags, ProcessEnv());
    if (!sweep.ok()) return UsageError(sweep.status());
    *request.mutable_sweep() = *std::move(sweep);
  }
  request.set_priority(context.flags->priority);
  request.set_idempotency_key(context.flags->idempotency_key);
  if (std::optional<int32_t> device = context.flags->device) {
    if (*device < 0) {
      return UsageError(absl::InvalidArgumentError("--device: must be a device index, 0 or more"));
    }
    request.set_device(static_cast<uint32_t>(*device));
  }
  request.set_gpu(context.flags->gpu);
  request.set_host(context.flags->host);
  auto stub = v1::ProbeService::NewStub(context.channel);
  grpc::ClientContext rpc;
  context.Prepare(rpc);
  rpc.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::Job job;
  const grpc::Status status = stub->Submit(&rpc, request, &job);
  if (!status.ok()) return ReportRpcError(context, status);
  std::cerr << absl::StrFormat("gpuprobe: job %s %s, %d ahead\n", job.id(), StateName(job.state()),
                               job.queue_position());
  if (!job.waiting_reason().empty()) std::cerr << "note: " << job.waiting_reason() << "\n";
  // With --wait, a script reads one record: the ended job's (the table keeps the id here).
  if (!context.flags->wait) {
    PrintJobState(context.format, job);
    return kExitOk;
  }
  if (context.format == "table") PrintJobState(context.format, job);
  return WaitCommand(context, job.id());
}

int WaitCommand(const ClientContext& context, const std::string& job_id) {
  auto stub = v1::ProbeService::NewStub(context.channel);
  grpc::ClientContext rpc;
  context.Prepare(rpc);
  absl::Duration timeout = absl::InfiniteDuration();
  if (const std::string& text = context.flags->timeout;
      !text.empty() && !absl::ParseDuration(text, &timeout)) {
    return UsageError(absl::InvalidArgumentError(
        absl::StrCat("--timeout: \"", text, "\" is not a duration (e.g. 90s, 30m, 2h)")));
  }
  if (timeout <= absl::ZeroDuration()) {
    return UsageError(absl::InvalidArgumentError(
        absl::StrCat("--timeout: ", absl::FormatDuration(timeout), "; must be positive")));
  }
  if (timeout != absl::InfiniteDuration()) {
    rpc.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  }
  v1::WatchRequest request;
  request.set_job_id(job_id);
  request.set_results(true);
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> stream = stub->Watch(&rpc, request);
  std::optional<v1::JobFinished> finished;
  v1::JobEvent event;
  {
    ProgressLine progress;
    progress.Show(absl::StrFormat("job %s: waiting for it", job_id));
    while (stream->Read(&event)) {
      if (event.has_finished()) finished = event.finished();
      if (event.has_progress()) progress.Show(ProgressText(job_id, event.progress()));
      if (event.has_ending()) {
        progress.Clear();
        TellEnding(job_id, event.ending());
      }
    }
  }
  const grpc::Status status = stream->Finish();
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    // The deadline may pass before the replay of a job that had already ended: ask its state.
    v1::Job job;
    if (FetchJob(context, *stub, job_id, &job).ok() && IsEnded(job.state())) {
      finished.emplace();
      finished->set_state(job.state());
      finished->set_error_message(job.error_message());
    } else {
      std::cerr << "gpuprobe: job " << job_id << " did not end within "
                << absl::FormatDuration(timeout) << "\n";
      return kExitTimedOut;
    }
  }
  if (!finished.has_value()) return ReportRpcError(context, status);
  if (!status.ok() && status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
    std::cerr << "gpuprobe: job " << job_id << ": " << status.error_message() << "\n";
  }
  if (finished->state() != v1::JOB_STATE_SUCCEEDED) {
    std::cerr << "gpuprobe: job " << job_id << " " << StateName(finished->state()) << ": "
              << finished->error_message() << "\n";
  }
  if (context.format != "table") {
    v1::Job job;
    if (!FetchJob(context, *stub, job_id, &job).ok()) {  // the end as the stream told it
      job.set_id(job_id);
      job.set_state(finished->state());
      job.set_error_message(finished->error_message());
    }
    PrintJobState(context.format, job);
  }
  return ExitCodeOf(finished->state());
}

int WatchCommand(const ClientContext& context, const std::string& job_id) {
  auto stub = v1::ProbeService::NewStub(context.channel);
  v1::Job job;
  if (grpc::Status s = FetchJob(context, *stub, job_id, &job); !s.ok()) {
    return ReportRpcError(context, s);
  }
  grpc::ClientContext rpc;
  context.Prepare(rpc);
  v1::WatchRequest request;
  request.set_job_id(job_id);
  request.set_results(true);
  request.set_all_attempts(context.flags->all_attempts);
  absl::StatusOr<JobPrinter> printer =
      JobPrinter::For(context.format, std::cout, IdentityOf(job), job.check());
  if (!printer.ok()) return UsageError(printer.status());
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> stream = stub->Watch(&rpc, request);
  return StreamJob(context, *stream, printer->Handlers(), job_id);
}

int ShowCommand(const ClientContext& context, const std::string& job_id) {
  auto stub = v1::ProbeService::NewStub(context.channel);
  v1::Job job;
  if (grpc::Status s = FetchJob(context, *stub, job_id, &job); !s.ok()) {
    return ReportRpcError(context, s);
  }
  // json: the record is the stream's first line ({"job": ...}), the rows follow, one per line,
  // all printed once every event has been read (a failed read prints nothing on stdout); csv,
  // table and tsv keep stdout for the rows (csv's schema is sweep's, tsv the seed's table) and
  // tell people the record on stderr.
  const std::string record = absl::StrCat("{\"job\":", ApiJson(job), "}\n");
  if (context.format != "json") {
    std::cerr << absl::StrFormat(
        "job %s: %s | submitted %s by %s | started %s | finished %s | attempts %d | device "
        "%s%s%s%s%s\n",
        job.id(), StateName(job.state()), When(job.created_at()), job.submitter(),
        When(job.started_at()), When(job.finished_at()), job.attempts(), job.device(),
        job.host().empty() ? "" : " on " + job.host(),
        job.error_message().empty() ? "" : " | " + job.error_message(),
        job.waiting_reason().empty() ? "" : " | " + job.waiting_reason(),
        job.ending().empty() ? "" : " | ending: " + job.ending());
    if (job.has_telemetry()) std::cerr << TelemetryLine(job.telemetry()) << "\n";
  }
  // Collect first: only the last attempt's rows count.
  grpc::ClientContext watch_rpc;
  context.Prepare(watch_rpc);
  v1::WatchRequest watch;
  watch.set_job_id(job_id);
  watch.set_results(true);
  if (job.state() == v1::JOB_STATE_QUEUED || job.state() == v1::JOB_STATE_RUNNING) {
    if (context.format == "json") std::cout << record;
    std::cerr << "the job has not ended; `gpuprobe watch " << job_id << "` follows it\n";
    return kExitOk;
  }
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> stream = stub->Watch(&watch_rpc, watch);
  std::vector<v1::JobEvent> events;
  v1::JobEvent event;
  uint32_t last_attempt = 0;
  while (stream->Read(&event)) {
    last_attempt = std::max(last_attempt, event.attempt());
    events.push_back(event);
  }
  // A job that did not succeed ends its stream with its status, after its finished event: its
  // record is shown. A stream broken before that (a stored event that cannot be read, DATA_LOSS)
  // fails `show` as it fails `watch`, with nothing on stdout.
  if (const grpc::Status status = stream->Finish(); !status.ok()) {
    const bool whole = std::any_of(events.begin(), events.end(),
                                   [](const v1::JobEvent& e) { return e.has_finished(); });
    if (whole && context.format == "json") std::cout << record;
    return ReportRpcError(context, status);
  }
  absl::StatusOr<JobPrinter> printer =
      JobPrinter::For(context.format, std::cout, IdentityOf(job), job.check());
  if (!printer.ok()) return UsageError(printer.status());
  if (context.format == "json") std::cout << record;
  for (const v1::JobEvent& e : events) {
    if (e.attempt() != last_attempt && !e.has_finished()) continue;
    printer->Print(e);
  }
  return ExitCodeOf(job.state());
}

int JobsCommand(const ClientContext& context) {
  v1::ListJobsRequest request;
  for (const std::string& name : context.flags->state) {
    v1::JobState state;
    if (!v1::JobState_Parse("JOB_STATE_" + absl::AsciiStrToUpper(name), &state)) {
      return UsageError(absl::InvalidArgumentError(absl::StrFormat(
          "--state: \"%s\" is not one of queued, running, succeeded, failed, cancelled", name)));
    }
    request.add_states(state);
  }
  if (absl::Status s = LabelsFromFlags(*context.flags, *request.mutable_labels()); !s.ok())
    return UsageError(s);
  const int limit = context.flags->limit;
  if (limit < 1 || limit > 1000) {
    return UsageError(
        absl::InvalidArgumentError(absl::StrFormat("--limit: %d is outside [1, 1000]", limit)));
  }
  request.set_page_size(static_cast<uint32_t>(limit));
  auto stub = v1::ProbeService::NewStub(context.channel);
  grpc::ClientContext rpc;
  context.Prepare(rpc);
  v1::ListJobsResponse response;
  if (grpc::Status s = stub->ListJobs(&rpc, request, &response); !s.ok()) {
    return ReportRpcError(context, s);
  }
  if (context.format == "json") {  // one Job object per line
    for (const v1::Job& job : response.jobs()) std::cout << ApiJson(job) << "\n";
    return kExitOk;
  }
  if (context.format == "csv" || context.format == "tsv") {
    auto line = [&](const std::vector<std::string>& cells) {
      return context.format == "csv" ? CsvLine(cells) : absl::StrJoin(cells, "\t") + "\n";
    };
    std::cout << line(
        {"job_id", "state", "submitted", "results", "attempts", "labels", "host", "probe"});
    for (const v1::Job& job : response.jobs()) {
      const JobIdentity identity = IdentityOf(job);
      std::cout << line({job.id(), StateName(job.state()), When(job.created_at()),
                         absl::StrCat(job.results()), absl::StrCat(job.attempts()), identity.labels,
                         job.host(), identity.probe});
    }
    return kExitOk;
  }
  std::cout << absl::StrFormat("%-12s %-10s %-19s %-7s %-8s %-12s %s\n", "job", "state",
                               "submitted", "results", "attempts", "host", "labels");
  for (const v1::Job& job : response.jobs()) {
    std::cout << absl::StrFormat("%-12s %-10s %-19s %7d %8d %-12s %s\n", job.id(),
                                 StateName(job.state()), When(job.created_at()), job.results(),
                                 job.attempts(), job.host().empty() ? "-" : job.host(),
                                 IdentityOf(job).labels);
  }
  return kExitOk;
}

int CancelCommand(const ClientContext& context, const std::string& job_id) {
  auto stub = v1::ProbeService::NewStub(context.channel);
  grpc::ClientContext rpc;
  context.Prepare(rpc);
  v1::CancelJobRequest request;
  request.set_job_id(job_id);
  v1::Job job;
  if (grpc::Status s = stub->CancelJob(&rpc, request, &job); !s.ok()) {
    return ReportRpcError(context, s);
  }
  if (context.format != "table") {
    PrintJobState(context.format, job);
    return kExitOk;
  }
  std::cout << absl::StrFormat("job %s: %s\n", job.id(),
                               job.state() == v1::JOB_STATE_RUNNING
                                   ? "stopping after the current launch"
                                   : StateName(job.state()));
  return kExitOk;
}

Subcommand SubmitSubcommand() {
  return {
      .name = "submit",
      .help = "queue a job (a sweep from the sweep flags, or --probe NAME); prints its id",
      .bind =
          [](CLI::App& app, ClientFlags& f, std::vector<std::string>&) {
            SweepFlags(app, f);
            app.add_option("--probe", f.probe,
                           "the probe (gpuprobe probes lists them); default: a moe-union sweep");
            ProbeFlags(app, f);
            app.add_option("--priority", f.priority, "higher runs first; equal priorities in order")
                ->capture_default_str();
            IdempotencyKeyFlag(app, f);
            app.add_flag("--wait", f.wait, "then wait for the job as `wait` does");
            OptionalFlag(app, "--device", f.device,
                         "run on this device index (gpuprobe info lists them); default the first "
                         "free");
            app.add_option("--gpu", f.gpu,
                           "run on a device of this model, e.g. \"NVIDIA H200\"; default any");
            app.add_option("--host", f.host, "run on this host of the fleet; default any");
            app.add_option("--timeout", f.timeout,
                           "with --wait: give up after this long (e.g. 30m)");
          },
      .run = [](const ClientContext& c,
                const std::vector<std::string>&) { return SubmitCommand(c); }};
}

Subcommand WaitSubcommand() {
  return {.name = "wait",
          .help = "block until JOB ends; the exit code tells how",
          .bind =
              [](CLI::App& app, ClientFlags& f, std::vector<std::string>& args) {
                JobArgument(app, args);
                app.add_option("--timeout", f.timeout,
                               "give up after this long (e.g. 30m), exit 5");
              },
          .run = [](const ClientContext& c,
                    const std::vector<std::string>& args) { return WaitCommand(c, args[0]); }};
}

Subcommand WatchSubcommand() {
  return {.name = "watch",
          .help = "print JOB's rows as they are stored",
          .bind =
              [](CLI::App& app, ClientFlags& f, std::vector<std::string>& args) {
                JobArgument(app, args);
                app.add_flag("--all-attempts", f.all_attempts,
                             "replay every attempt's events, not only the last attempt's");
              },
          .run = [](const ClientContext& c,
                    const std::vector<std::string>& args) { return WatchCommand(c, args[0]); }};
}

Subcommand JobsSubcommand() {
  return {.name = "jobs",
          .help = "the newest jobs",
          .bind =
              [](CLI::App& app, ClientFlags& f, std::vector<std::string>&) {
                ListFlag(app, "--state", f.state,
                         "only these states (queued, running, succeeded, failed, cancelled)",
                         "S,S");
                ListFlag(app, "--label", f.label, "only jobs with these labels: k=v,k2=v2", "K=V");
                app.add_option("--limit", f.limit, "at most this many (1..1000), newest first")
                    ->capture_default_str();
              },
          .run = [](const ClientContext& c,
                    const std::vector<std::string>&) { return JobsCommand(c); }};
}

Subcommand ShowSubcommand() {
  return {.name = "show",
          .help = "JOB's record and rows",
          .bind = [](CLI::App& app, ClientFlags&,
                     std::vector<std::string>& args) { JobArgument(app, args); },
          .run = [](const ClientContext& c,
                    const std::vector<std::string>& args) { return ShowCommand(c, args[0]); }};
}

Subcommand CancelSubcommand() {
  return {.name = "cancel",
          .help = "remove JOB from the queue, or stop it running",
          .bind = [](CLI::App& app, ClientFlags&,
                     std::vector<std::string>& args) { JobArgument(app, args); },
          .run = [](const ClientContext& c,
                    const std::vector<std::string>& args) { return CancelCommand(c, args[0]); }};
}

}  // namespace gpuprobe
