#include "client/job_printers.h"

namespace gpuprobe {

absl::StatusOr<JobPrinter> JobPrinter::For(const std::string& format, std::ostream& out,
                                           const JobIdentity& job, bool check) {
  JobPrinter p;
  if (check) {
    absl::StatusOr<std::unique_ptr<CheckPrinter>> checks = MakeCheckPrinter(format, out);
    if (!checks.ok()) return checks.status();
    p.checks_ = *std::move(checks);
    p.checks_->Identify(job);
  } else if (job.probe.empty() || job.probe == "moe-union") {
    absl::StatusOr<std::unique_ptr<SweepPrinter>> rows = MakeSweepPrinter(format, out);
    if (!rows.ok()) return rows.status();
    p.rows_ = *std::move(rows);
    p.rows_->Identify(job);
  } else {
    // The formats are the sweep printer's; it names a bad one.
    if (absl::Status s = MakeSweepPrinter(format, out).status(); !s.ok()) return s;
    p.results_ = std::make_unique<ResultPrinter>(format, out);
    p.results_->Identify(job);
  }
  return p;
}

void JobPrinter::Print(const v1::JobEvent& e) {
  if (e.has_started()) {
    if (rows_) rows_->Started(e.started());
    if (checks_) checks_->Started(e.started());
    if (results_) results_->Started(e.started());
  }
  if (e.has_check() && checks_) checks_->Check(e.check());
  if (e.has_result()) {
    if (rows_) rows_->Result(e.result());
    if (results_) results_->Result(e.result());
  }
  if (e.has_finished()) {
    if (rows_) rows_->Finished(e.finished());
    if (checks_) checks_->Finished(e.finished());
    if (results_) results_->Finished(e.finished());
  }
}

EventHandlers JobPrinter::Handlers() {
  auto print = [this](auto set) {
    return [this, set](const auto& message) {
      v1::JobEvent event;
      *(event.*set)() = message;
      Print(event);
    };
  };
  return {.started = print(&v1::JobEvent::mutable_started),
          .check = print(&v1::JobEvent::mutable_check),
          .result = print(&v1::JobEvent::mutable_result),
          .finished = print(&v1::JobEvent::mutable_finished)};
}

}  // namespace gpuprobe
