// `gpuprobe compare BASE CAND`: CompareJobs, printed in --format, with --fail-on's exit code.
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/commands.h"
#include "client/csv.h"
#include "client/exit_codes.h"
#include "client/flag_groups.h"
#include "client/job_stream.h"
#include "client/progress_line.h"
#include "client/proto_names.h"
#include "client/subcommands.h"
#include "client/sweep_request_flags.h"
#include "common/api_json.h"

namespace gpuprobe {
namespace {

// --confirm's bound: each confirmation is a job on the device.
constexpr int kMaxConfirmations = 10;

// The table's first line: what was compared with what, and how.
std::string Heading(const v1::CompareJobsResponse& r) {
  const std::string base = r.history_job_ids().empty()
                               ? absl::StrCat(r.base_job_id(), " (base)")
                               : absl::StrFormat("%d baseline jobs (%s)", r.history_job_ids_size(),
                                                 absl::StrJoin(r.history_job_ids(), ", "));
  return absl::StrFormat("%s -> %s (candidate), threshold %.1f%%, %.0f%% intervals (%s)\n", base,
                         r.candidate_job_id(), 100 * r.threshold(), 100 * r.confidence(),
                         r.method());
}

// People's note on what the intervals leave out: under the table, or on stderr beside a
// script's format.
void PrintNote(const std::string& format, const v1::CompareJobsResponse& r) {
  if (r.note().empty()) return;
  (format == "table" ? std::cout : std::cerr) << "note: " << r.note() << "\n";
}

// One line of the script formats: csv through the one RFC 4180 writer, tsv tab-separated.
void PrintLine(const std::string& format, const std::vector<std::string>& cells) {
  std::cout << (format == "csv" ? CsvLine(cells) : absl::StrCat(absl::StrJoin(cells, "\t"), "\n"));
}

// An arm's axes' values, as the table prints them.
std::vector<std::string> AxisCells(const v1::ArmComparison& a) {
  std::vector<std::string> cells;
  for (const v1::AxisValue& axis : a.axes()) {
    cells.push_back(axis.has_int_value() ? absl::StrCat(axis.int_value()) : axis.text_value());
  }
  return cells;
}

// The verdicts counted, one line.
std::string Tally(const v1::CompareJobsResponse& r) {
  return absl::StrFormat("%d faster, %d slower, %d same, %d unsure, %d too few reps\n", r.faster(),
                         r.slower(), r.same(), r.unsure(), r.too_few_reps());
}

// An arm's compared values under the API's names, in full.
std::vector<std::string> Compared(const v1::ArmComparison& a) {
  return {CsvNumber(a.base_section_us()), CsvNumber(a.candidate_section_us()),
          CsvNumber(a.ratio()),           CsvNumber(a.ratio_low()),
          CsvNumber(a.ratio_high()),      CliName(a.verdict())};
}

// The arms' axes, then the compared quantity (base_QUANTITY, candidate_QUANTITY, ...): a time
// metric's name, or section_us for an arm's several times summed (moe-union's gate+up and down).
void PrintArms(const std::string& format, const v1::CompareJobsResponse& r) {
  const std::string quantity = r.arms(0).quantity();
  std::vector<std::string> header;
  for (const v1::AxisValue& a : r.arms(0).axes()) header.push_back(a.name());
  for (const std::string& h :
       {"base_" + quantity, "candidate_" + quantity, std::string("ratio"), std::string("ratio_low"),
        std::string("ratio_high"), std::string("verdict")}) {
    header.push_back(h);
  }
  if (format == "table") {
    std::cout << Heading(r) << absl::StrJoin(header, "  ") << "\n";
    for (const v1::ArmComparison& a : r.arms()) {
      std::vector<std::string> cells = AxisCells(a);
      for (const std::string& c :
           {absl::StrFormat("%.6g", a.base_section_us()),
            absl::StrFormat("%.6g", a.candidate_section_us()), absl::StrFormat("%.4f", a.ratio()),
            absl::StrFormat("%.4f", a.ratio_low()), absl::StrFormat("%.4f", a.ratio_high()),
            VerdictName(a.verdict())}) {
        cells.push_back(c);
      }
      std::cout << absl::StrJoin(cells, "  ") << "\n";
    }
    std::cout << Tally(r);
  } else {
    PrintLine(format, header);
    for (const v1::ArmComparison& a : r.arms()) {
      std::vector<std::string> cells = AxisCells(a);
      for (std::string& c : Compared(a)) cells.push_back(std::move(c));
      PrintLine(format, cells);
    }
  }
  PrintNote(format, r);
}

// The comparison as a pull-request comment: the heading, one table row per arm with the ratio, its
// interval and the verdict in bold, the counts, and the note as a quote.
void PrintMarkdown(const v1::CompareJobsResponse& r) {
  std::cout << "### gpuprobe compare " << Heading(r) << "\n";
  if (!r.arms().empty()) {
    std::vector<std::string> header;
    for (const v1::AxisValue& a : r.arms(0).axes()) header.push_back(a.name());
    const std::string quantity = r.arms(0).quantity();
    for (const std::string& h : {"base " + quantity, "candidate " + quantity,
                                 std::string("ratio [95%]"), std::string("verdict")}) {
      header.push_back(h);
    }
    std::cout << "| " << absl::StrJoin(header, " | ") << " |\n|";
    for (size_t i = 0; i < header.size(); ++i)
      std::cout << (i < header.size() - 4 ? "---|" : "---:|");
    std::cout << "\n";
    for (const v1::ArmComparison& a : r.arms()) {
      std::vector<std::string> cells = AxisCells(a);
      cells.push_back(absl::StrFormat("%.6g", a.base_section_us()));
      cells.push_back(absl::StrFormat("%.6g", a.candidate_section_us()));
      cells.push_back(
          absl::StrFormat("%.4f [%.4f, %.4f]", a.ratio(), a.ratio_low(), a.ratio_high()));
      cells.push_back(absl::StrCat("**", VerdictName(a.verdict()), "**"));
      std::cout << "| " << absl::StrJoin(cells, " | ") << " |\n";
    }
    std::cout << "\n";
  } else {
    std::cout << "no arm in both jobs\n\n";
  }
  std::cout << Tally(r);
  if (!r.note().empty()) std::cout << "\n> " << r.note() << "\n";
}

void Print(const std::string& format, const v1::CompareJobsResponse& r) {
  if (format == "markdown") {
    PrintMarkdown(r);
    return;
  }
  if (format == "json") {  // the whole comparison as one object on one line
    std::cout << ApiJson(r) << "\n";
    return;
  }
  if (r.arms().empty()) {
    if (format == "table") std::cout << Heading(r) << "no arm in both jobs\n";
    PrintNote(format, r);
    return;
  }
  PrintArms(format, r);
}

// The key an arm is known by across comparisons: its axes' values.
std::string ArmKey(const v1::ArmComparison& a) { return absl::StrJoin(AxisCells(a), "\t"); }

// The slower arms' keys.
std::set<std::string> SlowerArms(const v1::CompareJobsResponse& r) {
  std::set<std::string> slower;
  for (const v1::ArmComparison& a : r.arms()) {
    if (a.verdict() == v1::VERDICT_SLOWER) slower.insert(ArmKey(a));
  }
  return slower;
}

// The labels of a request's work.
google::protobuf::Map<std::string, std::string>& MutableLabels(v1::SubmitRequest& r) {
  return *(r.has_probe()   ? r.mutable_probe()->mutable_labels()
           : r.has_check() ? r.mutable_check()->mutable_labels()
                           : r.mutable_sweep()->mutable_labels());
}

// --confirm: job `candidate`'s request submitted again and followed to its end, its progress on
// stderr: a new job (no idempotency key) whose one label is gpuprobe.confirms=CANDIDATE, so that
// it never joins a label's history. The new job's id, or why there is none.
absl::StatusOr<std::string> RunAgain(const ClientContext& context, v1::ProbeService::Stub& stub,
                                     const std::string& candidate) {
  v1::Job job;
  {
    grpc::ClientContext rpc;
    context.Prepare(rpc);
    v1::GetJobRequest get;
    get.set_job_id(candidate);
    if (grpc::Status s = stub.GetJob(&rpc, get, &job); !s.ok()) {
      return absl::UnavailableError(absl::StrCat("get ", candidate, ": ", s.error_message()));
    }
  }
  v1::SubmitRequest again = job.request();
  again.clear_idempotency_key();
  MutableLabels(again).clear();
  MutableLabels(again)["gpuprobe.confirms"] = candidate;
  v1::Job submitted;
  {
    grpc::ClientContext rpc;
    context.Prepare(rpc);
    if (grpc::Status s = stub.Submit(&rpc, again, &submitted); !s.ok()) {
      return absl::UnavailableError(
          absl::StrCat("submit ", candidate, " again: ", s.error_message()));
    }
  }
  grpc::ClientContext rpc;
  context.Prepare(rpc);
  v1::WatchRequest watch;
  watch.set_job_id(submitted.id());
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> events = stub.Watch(&rpc, watch);
  std::optional<v1::JobFinished> finished;
  {
    ProgressLine progress;
    progress.Show(absl::StrFormat("job %s: %s again, queued", submitted.id(), candidate));
    for (v1::JobEvent e; events->Read(&e);) {
      if (e.has_progress()) progress.Show(ProgressText(submitted.id(), e.progress()));
      if (e.has_finished()) finished = e.finished();
    }
  }
  if (grpc::Status s = events->Finish(); !finished.has_value()) {
    return absl::UnavailableError(absl::StrCat("watch ", submitted.id(), ": ", s.error_message()));
  }
  if (finished->state() != v1::JOB_STATE_SUCCEEDED) {
    return absl::AbortedError(absl::StrFormat("%s (%s again) %s: %s", submitted.id(), candidate,
                                              StateName(finished->state()),
                                              finished->error_message()));
  }
  return submitted.id();
}

}  // namespace

int CompareCommand(const ClientContext& context, const std::string& base,
                   const std::string& candidate) {
  absl::StatusOr<double> threshold = ParseFraction("--threshold", context.flags->threshold);
  if (!threshold.ok()) return UsageError(threshold.status());
  const std::string fail_on = context.flags->fail_on;
  if (absl::Status s = CheckFailOn(fail_on); !s.ok()) return UsageError(s);
  if (base == candidate) {
    return UsageError(absl::InvalidArgumentError(absl::StrFormat(
        "compare %s %s: the candidate is the base job itself; compare two jobs", base, candidate)));
  }
  auto stub = v1::ProbeService::NewStub(context.channel);
  grpc::ClientContext rpc;
  context.Prepare(rpc);
  v1::CompareJobsRequest request;
  request.set_base(base);
  request.set_candidate(candidate);
  request.set_threshold(*threshold);
  const int history = context.flags->history;
  if (history < 0 || history > 1000) {
    return UsageError(
        absl::InvalidArgumentError(absl::StrFormat("--history: %d is outside [0, 1000]", history)));
  }
  request.set_history(static_cast<uint32_t>(history));
  const int confirm = context.flags->confirm;
  if (confirm < 0 || confirm > kMaxConfirmations) {
    return UsageError(absl::InvalidArgumentError(
        absl::StrFormat("--confirm: %d is outside [0, %d]", confirm, kMaxConfirmations)));
  }
  v1::CompareJobsResponse response;
  if (grpc::Status s = stub->CompareJobs(&rpc, request, &response); !s.ok()) {
    return ReportRpcError(context, s);
  }
  Print(context.format, response);
  // A slower verdict stands only if each re-run of the candidate is slower on the same arms.
  std::set<std::string> slower = SlowerArms(response);
  for (int run = 1; run <= confirm && !slower.empty(); ++run) {
    std::cerr << absl::StrFormat("gpuprobe: %d arm(s) slower; running %s again (%d of %d)\n",
                                 slower.size(), candidate, run, confirm);
    absl::StatusOr<std::string> again = RunAgain(context, *stub, candidate);
    if (!again.ok()) {
      std::cerr << "gpuprobe: --confirm: " << again.status().message() << "\n";
      return kExitJobFailed;
    }
    grpc::ClientContext rerun;
    context.Prepare(rerun);
    request.set_candidate(*again);
    v1::CompareJobsResponse confirmed;
    if (grpc::Status s = stub->CompareJobs(&rerun, request, &confirmed); !s.ok()) {
      return ReportRpcError(context, s);
    }
    Print(context.format, confirmed);
    std::set<std::string> still;
    for (const std::string& arm : SlowerArms(confirmed)) {
      if (slower.contains(arm)) still.insert(arm);
    }
    slower = std::move(still);
  }
  if (confirm > 0 && response.slower() > 0) {
    std::cerr << absl::StrFormat(
        "gpuprobe: %d of %d slower arm(s) slower again in every re-run of %s (--confirm %d)\n",
        slower.size(), response.slower(), candidate, confirm);
  }
  const int slower_arms = confirm > 0 ? static_cast<int>(slower.size()) : response.slower();
  return FailsOn(fail_on, slower_arms, slower_arms + response.unsure() + response.too_few_reps())
             ? kExitRegression
             : kExitOk;
}

Subcommand CompareSubcommand() {
  return {.name = "compare",
          .help =
              "arm by arm: CAND's time over BASE's with a 95% interval and a verdict (faster, "
              "slower, same, unsure)",
          .bind =
              [](CLI::App& app, ClientFlags& f, std::vector<std::string>&) {
                app.add_option("BASE", f.base,
                               "a job id, or label:KEY=VALUE[,KEY2=VALUE2] (the newest succeeded "
                               "jobs so labelled: the history)")
                    ->required()
                    ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
                app.add_option("CAND", f.candidate, "the candidate job's id")
                    ->required()
                    ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
                app.add_option("--threshold", f.threshold,
                               "ratios within 1 +- this are \"same\" (e.g. 2% or 0.02)")
                    ->capture_default_str();
                app.add_option("--history", f.history,
                               "with a label BASE, how many of the newest matching jobs make the "
                               "baseline (at least 3 for a verdict; 0: 8)")
                    ->capture_default_str();
                app.add_option("--confirm", f.confirm,
                               "on a slower arm, run CAND's request again up to N times (each a "
                               "new job labelled gpuprobe.confirms=CAND, compared in turn): an "
                               "arm is slower only if it is in every run")
                    ->capture_default_str();
                FailOnFlag(app, f);
              },
          .run =
              [](const ClientContext& c, const std::vector<std::string>&) {
                return CompareCommand(c, c.flags->base, c.flags->candidate);
              }};
}

}  // namespace gpuprobe
