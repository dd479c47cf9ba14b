#include "client/check_printer.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/csv.h"
#include "client/proto_names.h"
#include "common/api_json.h"

namespace gpuprobe {

void CheckPrinter::Cells(const std::vector<std::string>& cells) {
  if (format_ == "csv") {
    out_ << CsvLine(cells) << std::flush;
    return;
  }
  if (format_ == "tsv") {
    out_ << absl::StrJoin(cells, "\t") << "\n" << std::flush;
    return;
  }
  static constexpr int kWidths[] = {8, 15, 3, 5, 10, 10, 10, 9, 6};
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    absl::StrAppend(&line, i == 0 ? "" : " ",
                    i < 2 ? absl::StrFormat("%-*s", kWidths[i], cells[i])
                          : absl::StrFormat("%*s", kWidths[i], cells[i]));
  }
  out_ << line << "\n" << std::flush;
}

void CheckPrinter::Started(const v1::JobStarted& started) {
  generic_ = !started.probe().empty() && started.probe() != "moe-union";
  sweep_ = started.sweep();
  if (format_ == "json") return;
  if (generic_) {
    if (format_ == "table") {
      out_ << absl::StrFormat("%s check on %s\n", started.probe(), started.device());
    }
    return;
  }
  const v1::ResolvedSweep& s = started.sweep();
  if (format_ == "table") {
    out_ << absl::StrFormat(
        "exactness check on %s | seed %d\ngeometry experts=%d hidden=%d ff=%d selected=%d | "
        "outputs poisoned with NaN, compared with the float64 reference\n",
        started.device(), s.seed(), s.experts(), s.hidden(), s.ff(), s.selected());
  }
  if (format_ == "csv") {
    Cells({"job_id", "probe", "labels", "experts", "hidden", "ff", "selected", "seed", "variant",
           "kernel", "t", "union_size", "max_rel_error", "mean_rel_error", "norm_rel_error",
           "unwritten", "passed", "detail"});
    return;
  }
  Cells({"variant", "kernel", "t", "union", "max_rel", "mean_rel", "norm_rel", "unwritten",
         "result"});
}

void CheckPrinter::Check(const v1::KernelCheck& c) {
  if (format_ == "json") {
    v1::KernelCheck stamped = c;  // a daemon before job_id and seed left them unset
    if (stamped.job_id().empty()) stamped.set_job_id(job_.job_id);
    if (!generic_ && stamped.seed() == 0) stamped.set_seed(sweep_.seed());
    out_ << ApiJson(stamped) << "\n" << std::flush;
    return;
  }
  if (generic_) {
    std::vector<std::string> header = {"kernel"}, cells = {c.kernel()};
    if (format_ == "csv") {
      header = {"job_id", "probe", "labels", "kernel"};
      cells = {job_.job_id, job_.probe, job_.labels, c.kernel()};
    }
    for (const v1::AxisValue& a : c.axes()) {
      header.push_back(a.name());
      cells.push_back(a.has_int_value() ? absl::StrCat(a.int_value()) : a.text_value());
    }
    header.insert(header.end(), {format_ == "csv" ? "passed" : "result", "detail"});
    cells.insert(cells.end(), {format_ == "csv" ? (c.passed() ? "true" : "false")
                                                : (c.passed() ? "pass" : "FAIL"),
                               c.detail()});
    if (format_ == "csv") {
      if (!generic_header_printed_) out_ << CsvLine(header);
      out_ << CsvLine(cells) << std::flush;
    } else {
      const std::string sep = format_ == "tsv" ? "\t" : "  ";
      if (!generic_header_printed_) out_ << absl::StrJoin(header, sep) << "\n";
      out_ << absl::StrJoin(cells, sep) << "\n" << std::flush;
    }
    generic_header_printed_ = true;
    return;
  }
  if (format_ == "table" && !criteria_printed_) {
    out_ << absl::StrFormat(
        "pass: every element written, max_rel <= %.0e (elements under 1%% of the largest judged "
        "against that 1%%), norm_rel <= %.0e\n",
        c.tolerance(), c.norm_tolerance());
    criteria_printed_ = true;
  }
  if (format_ == "csv") {
    Cells({job_.job_id, job_.probe, job_.labels, absl::StrCat(sweep_.experts()),
           absl::StrCat(sweep_.hidden()), absl::StrCat(sweep_.ff()),
           absl::StrCat(sweep_.selected()), absl::StrCat(sweep_.seed()), VariantName(c.variant()),
           c.kernel(), absl::StrCat(c.t()), absl::StrCat(c.union_size()),
           CsvNumber(c.max_rel_error()), CsvNumber(c.mean_rel_error()),
           CsvNumber(c.norm_rel_error()), absl::StrCat(c.unwritten()),
           c.passed() ? "true" : "false", c.detail()});
    return;
  }
  Cells({VariantName(c.variant()), c.kernel(), absl::StrCat(c.t()), absl::StrCat(c.union_size()),
         absl::StrFormat("%.2e", c.max_rel_error()), absl::StrFormat("%.2e", c.mean_rel_error()),
         absl::StrFormat("%.2e", c.norm_rel_error()), absl::StrCat(c.unwritten()),
         c.passed() ? "pass" : "FAIL"});
  if (!c.detail().empty() && format_ == "table") out_ << "         " << c.detail() << "\n";
}

void CheckPrinter::Finished(const v1::JobFinished& f) {
  if (format_ != "table") return;
  out_ << (f.state() == v1::JOB_STATE_SUCCEEDED
               ? absl::StrFormat("all %d kernel checks passed in %.1f s\n", f.rows(), f.elapsed_s())
               : absl::StrFormat("check %s: %s\n", StateName(f.state()), f.error_message()))
       << std::flush;
}

absl::StatusOr<std::unique_ptr<CheckPrinter>> MakeCheckPrinter(std::string_view format,
                                                               std::ostream& out) {
  if (format != "table" && format != "tsv" && format != "csv" && format != "json") {
    return absl::InvalidArgumentError(
        absl::StrFormat("--format: \"%s\" is not one of table, tsv, csv, json", format));
  }
  return std::make_unique<CheckPrinter>(format, out);
}

}  // namespace gpuprobe
