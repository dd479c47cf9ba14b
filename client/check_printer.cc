#include "client/check_printer.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/csv.h"
#include "client/proto_names.h"
#include "common/proto_json.h"

namespace gpuprobe {

void CheckPrinter::Cells(const std::vector<std::string>& cells) {
  if (format_ == "tsv" || format_ == "csv") {
    out_ << absl::StrJoin(cells, format_ == "tsv" ? "\t" : ",") << "\n" << std::flush;
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
  Cells({"variant", "kernel", "t", "union", "max_rel", "mean_rel", "norm_rel", "unwritten",
         "result"});
}

void CheckPrinter::Check(const v1::KernelCheck& c) {
  if (format_ == "json") {
    out_ << ProtoJson(c) << "\n" << std::flush;
    return;
  }
  if (generic_) {
    std::vector<std::string> header = {"kernel"}, cells = {c.kernel()};
    for (const v1::AxisValue& a : c.axes()) {
      header.push_back(a.name());
      cells.push_back(a.has_int_value() ? absl::StrCat(a.int_value()) : a.text_value());
    }
    header.insert(header.end(), {"result", "detail"});
    cells.insert(cells.end(), {c.passed() ? "pass" : "FAIL", c.detail()});
    if (format_ == "csv") {
      for (std::string& cell : cells) cell = CsvField(cell);
    }
    const std::string sep = format_ == "csv" ? "," : format_ == "tsv" ? "\t" : "  ";
    if (!generic_header_printed_) out_ << absl::StrJoin(header, sep) << "\n";
    generic_header_printed_ = true;
    out_ << absl::StrJoin(cells, sep) << "\n" << std::flush;
    return;
  }
  if (format_ == "table" && !criteria_printed_) {
    out_ << absl::StrFormat(
        "pass: every element written, max_rel <= %.0e (elements under 1%% of the largest judged "
        "against that 1%%), norm_rel <= %.0e\n",
        c.tolerance(), c.norm_tolerance());
    criteria_printed_ = true;
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
