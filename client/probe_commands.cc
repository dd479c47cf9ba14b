#include "client/probe_commands.h"

#include <iostream>
#include <optional>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/csv.h"
#include "client/exit_codes.h"
#include "client/flag_groups.h"
#include "client/interrupt.h"
#include "client/job_identity.h"
#include "client/job_printers.h"
#include "client/job_stream.h"
#include "client/subcommands.h"
#include "client/sweep_request_flags.h"
#include "common/abbreviated.h"
#include "common/api_json.h"

namespace gpuprobe {
namespace {

void PrintQuantities(const char* title,
                     const google::protobuf::RepeatedPtrField<v1::ProbeQuantity>& quantities) {
  std::vector<std::string> names;
  for (const v1::ProbeQuantity& q : quantities) {
    names.push_back(q.unit().empty() ? q.name() : absl::StrFormat("%s (%s)", q.name(), q.unit()));
  }
  if (!names.empty())
    std::cout << absl::StrFormat("  %-9s %s\n", title, absl::StrJoin(names, ", "));
}

}  // namespace

absl::StatusOr<v1::ProbeRequest> ProbeRequestFromFlags(const std::string& probe,
                                                       const ClientFlags& flags) {
  v1::ProbeRequest request;
  request.set_probe(probe);
  request.set_check(flags.check);
  for (const std::string& param : flags.params) {
    const size_t eq = param.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--param: \"%s\" is not of the form NAME=VALUE", Abbreviated(param)));
    }
    (*request.mutable_param_values())[param.substr(0, eq)] = param.substr(eq + 1);
  }
  if (absl::Status s = LabelsFromFlags(flags, *request.mutable_labels()); !s.ok()) return s;
  return request;
}

int ProbesCommand(const ClientContext& context) {
  auto stub = v1::ProbeService::NewStub(context.channel);
  grpc::ClientContext rpc;
  context.Prepare(rpc);
  rpc.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ListProbesResponse list;
  if (grpc::Status s = stub->ListProbes(&rpc, v1::ListProbesRequest(), &list); !s.ok()) {
    return ReportRpcError(context, s);
  }
  if (context.format == "json") {
    std::cout << ApiJson(list) << "\n";
    return kExitOk;
  }
  if (context.format == "csv" || context.format == "tsv") {
    auto line = [&](const std::vector<std::string>& cells) {
      return context.format == "csv" ? CsvLine(cells) : absl::StrJoin(cells, "\t") + "\n";
    };
    std::cout << line({"probe", "param", "type", "default", "limits"});
    for (const v1::ProbeInfo& probe : list.probes()) {
      for (const v1::ProbeParam& p : probe.params()) {
        std::cout << line({probe.name(), p.name(), p.type(), p.default_value(), p.limits()});
      }
    }
    return kExitOk;
  }
  for (const v1::ProbeInfo& probe : list.probes()) {
    std::cout << absl::StrFormat("%s: %s%s\n", probe.name(), probe.description(),
                                 probe.has_check() ? " (has a check: --check)" : "");
    for (const v1::ProbeParam& p : probe.params()) {
      std::cout << absl::StrFormat(
          "  --param %s=...  %s; %s%s%s\n", p.name(), p.description(), p.type(),
          p.default_value().empty() ? "" : ", default " + p.default_value(),
          p.limits().empty() ? "" : ", " + p.limits());
    }
    PrintQuantities("axes", probe.axes());
    PrintQuantities("metrics", probe.metrics());
    PrintQuantities("derived", probe.derived());
  }
  return kExitOk;
}

int RunCommand(const ClientContext& context, const std::string& probe) {
  absl::StatusOr<v1::ProbeRequest> request = ProbeRequestFromFlags(probe, *context.flags);
  if (!request.ok()) return UsageError(request.status());
  v1::SubmitRequest submit;
  *submit.mutable_probe() = *std::move(request);
  return SubmitAndFollow(context, submit);
}

int SubmitAndFollow(const ClientContext& context, v1::SubmitRequest submit,
                    const std::function<EventHandlers(const v1::Job&)>& handlers) {
  auto stub = v1::ProbeService::NewStub(context.channel);
  submit.set_idempotency_key(context.flags->idempotency_key);
  v1::Job job;
  {
    grpc::ClientContext rpc;
    context.Prepare(rpc);
    rpc.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    if (grpc::Status s = stub->Submit(&rpc, submit, &job); !s.ok()) {
      return ReportRpcError(context, s);
    }
  }
  std::cerr << absl::StrFormat("gpuprobe: job %s (%s%s) queued, %d ahead\n", job.id(), job.probe(),
                               job.check() ? " check" : "", job.queue_position());
  std::optional<JobPrinter> printer;
  EventHandlers on;
  if (handlers) {
    on = handlers(job);
  } else {
    absl::StatusOr<JobPrinter> made =
        JobPrinter::For(context.format, std::cout, IdentityOf(job), job.check());
    if (!made.ok()) return UsageError(made.status());
    printer.emplace(*std::move(made));
    on = printer->Handlers();
  }
  grpc::ClientContext rpc;
  context.Prepare(rpc);
  v1::WatchRequest watch;
  watch.set_job_id(job.id());
  watch.set_results(true);
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> stream = stub->Watch(&rpc, watch);
  CancelOnInterrupt cancel(context, rpc);
  cancel.Known(job.id());
  return StreamJob(context, *stream, on, job.id());
}

Subcommand ProbesSubcommand() {
  return {.name = "probes",
          .help = "the probes the daemon serves, with their parameters",
          .bind = [](CLI::App&, ClientFlags&, std::vector<std::string>&) {},
          .run = [](const ClientContext& c,
                    const std::vector<std::string>&) { return ProbesCommand(c); }};
}

Subcommand RunSubcommand() {
  return {.name = "run",
          .help = "run a job of any probe, printing its results",
          .bind =
              [](CLI::App& app, ClientFlags& f, std::vector<std::string>& args) {
                app.add_option("PROBE", args, "the probe (gpuprobe probes lists them)")
                    ->required()
                    ->expected(1)
                    ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
                ProbeFlags(app, f);
                ListFlag(app, "--label", f.label, "labels stored with the job: k=v,k2=v2", "K=V");
                IdempotencyKeyFlag(app, f);
              },
          .run = [](const ClientContext& c,
                    const std::vector<std::string>& args) { return RunCommand(c, args[0]); }};
}

}  // namespace gpuprobe
