#include "client/result_printer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/csv.h"
#include "client/proto_names.h"
#include "common/api_json.h"

namespace gpuprobe {
namespace {

std::string AxisCell(const v1::AxisValue& a) {
  return a.has_int_value() ? absl::StrCat(a.int_value()) : a.text_value();
}

// Six significant digits for people; csv's numbers in full.
std::string Number(double v, bool csv) { return csv ? CsvNumber(v) : absl::StrFormat("%.6g", v); }

std::string WithUnit(const std::string& name, const std::string& unit) {
  return unit.empty() ? name : absl::StrCat(name, " (", unit, ")");
}

std::vector<std::string> Header(const std::vector<v1::ParamText>& params, const v1::Result& r,
                                bool csv) {
  std::vector<std::string> cells;
  if (csv) {
    cells = {"job_id", "probe", "labels"};
    for (const v1::ParamText& p : params) cells.push_back(p.name());
  }
  for (const v1::AxisValue& a : r.axes()) cells.push_back(a.name());
  for (const v1::MetricStats& m : r.metrics()) {
    if (csv) {
      for (const char* part : {"", "_min", "_max", "_spread", "_low", "_high", "_kept"}) {
        cells.push_back(absl::StrCat(m.name(), part));
      }
    } else {
      cells.push_back(WithUnit(m.name(), m.unit()));
      cells.push_back(absl::StrCat(m.name(), "_spread"));
    }
  }
  for (const v1::DerivedValue& d : r.derived()) {
    cells.push_back(csv ? d.name() : WithUnit(d.name(), d.unit()));
  }
  cells.push_back("disturbance");
  cells.push_back("verdict");
  cells.push_back("impossible");
  if (csv) cells.push_back("sampling_end");
  return cells;
}

std::vector<std::string> Cells(const JobIdentity& job, const std::vector<v1::ParamText>& params,
                               const v1::Result& r, bool csv) {
  std::vector<std::string> cells;
  if (csv) {
    cells = {job.job_id, job.probe, job.labels};
    for (const v1::ParamText& p : params) cells.push_back(p.value());
  }
  for (const v1::AxisValue& a : r.axes()) cells.push_back(AxisCell(a));
  for (const v1::MetricStats& m : r.metrics()) {
    cells.push_back(Number(m.median(), csv));
    if (csv) {
      cells.push_back(Number(m.min(), csv));
      cells.push_back(Number(m.max(), csv));
    }
    // One sample (a command's table cell) has no spread and no interval.
    const bool spread = m.kept() >= 2;
    const std::string none = csv ? "" : "-";
    cells.push_back(spread ? (csv ? CsvNumber(m.spread()) : absl::StrFormat("%.4f", m.spread()))
                           : none);
    if (csv) {
      cells.push_back(spread ? Number(m.low(), csv) : none);
      cells.push_back(spread ? Number(m.high(), csv) : none);
      cells.push_back(absl::StrCat(m.kept()));
    }
  }
  for (const v1::DerivedValue& d : r.derived()) cells.push_back(Number(d.value(), csv));
  cells.push_back(r.disturbance().empty() && !csv ? "-" : r.disturbance());
  const std::string none = csv ? "" : "-";
  cells.push_back(r.verdict() == v1::VERDICT_UNSPECIFIED ? none : CliName(r.verdict()));
  cells.push_back(r.impossible().empty() ? none : r.impossible());
  if (csv) {
    cells.push_back(r.sampling_end() == v1::SAMPLING_END_UNSPECIFIED ? ""
                                                                     : CliName(r.sampling_end()));
  }
  return cells;
}

}  // namespace

void ResultPrinter::Line(const std::vector<std::string>& cells) {
  if (format_ == "csv") {
    out_ << CsvLine(cells) << std::flush;
    return;
  }
  if (format_ == "tsv") {
    out_ << absl::StrJoin(cells, "\t") << "\n" << std::flush;
    return;
  }
  if (widths_.empty()) {
    for (const std::string& c : cells) widths_.push_back(std::max<size_t>(c.size(), 10));
  }
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    const size_t width = i < widths_.size() ? widths_[i] : cells[i].size();
    absl::StrAppend(&line, i == 0 ? "" : "  ", absl::StrFormat("%*s", width, cells[i]));
  }
  out_ << line << "\n" << std::flush;
}

void ResultPrinter::Started(const v1::JobStarted& started) {
  params_.assign(started.resolved_params().begin(), started.resolved_params().end());
  if (format_ == "table") {
    out_ << absl::StrFormat("%s on %s\n", started.probe(), started.device()) << std::flush;
  } else if (format_ == "tsv") {
    out_ << absl::StrFormat("# %s on %s\n", started.probe(), started.device()) << std::flush;
  }
}

void ResultPrinter::Result(const v1::Result& result) {
  if (format_ == "json") {
    v1::Result stamped = result;  // a daemon before job_id left it unset
    if (stamped.job_id().empty()) stamped.set_job_id(job_.job_id);
    out_ << ApiJson(stamped) << "\n" << std::flush;
    return;
  }
  const bool csv = format_ == "csv";
  if (!header_printed_) {
    Line(Header(params_, result, csv));
    header_printed_ = true;
  }
  Line(Cells(job_, params_, result, csv));
}

void ResultPrinter::Finished(const v1::JobFinished& f) {
  if (format_ != "table" && format_ != "tsv") return;
  const std::string end = f.state() == v1::JOB_STATE_SUCCEEDED
                              ? absl::StrFormat("%d results in %.1f s", f.rows(), f.elapsed_s())
                              : absl::StrFormat("%s: %s", StateName(f.state()), f.error_message());
  out_ << (format_ == "tsv" ? "# " : "") << end << "\n" << std::flush;
}

}  // namespace gpuprobe
