#include "client/kernel_summary.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/proto_names.h"

namespace gpuprobe {
namespace {

std::string Axis(const v1::Result& r, const std::string& name) {
  for (const v1::AxisValue& a : r.axes()) {
    if (a.name() == name) return a.text_value();
  }
  return "";
}

const v1::DerivedValue* DerivedNamed(const v1::Result& r, const std::string& name) {
  for (const v1::DerivedValue& d : r.derived()) {
    if (d.name() == name) return &d;
  }
  return nullptr;
}

}  // namespace

int KernelSummary::Slower() const {
  int n = 0;
  for (const v1::Result& r : results_) n += r.verdict() == v1::VERDICT_SLOWER;
  return n;
}

int KernelSummary::NotSame() const {
  int n = 0;
  for (const v1::Result& r : results_) {
    n += r.verdict() == v1::VERDICT_SLOWER || r.verdict() == v1::VERDICT_UNSURE ||
         r.verdict() == v1::VERDICT_TOO_FEW_REPS;
  }
  return n;
}

std::string KernelSummary::Markdown(const std::string& job_id,
                                    const v1::JobFinished& finished) const {
  std::string device = results_.empty() ? "" : results_.front().device();
  std::string out = absl::StrFormat("### gpuprobe kernel %s%s\n\n", job_id,
                                    device.empty() ? "" : absl::StrCat(" on ", device));
  if (finished.state() != v1::JOB_STATE_SUCCEEDED) {
    absl::StrAppend(&out, "**", CliName(finished.state()), "**: ", finished.error_message(), "\n");
    if (results_.empty()) return out;
    out += "\n";
  }
  std::map<std::string, std::string> code;  // arm -> code_sha256
  for (const v1::Result& r : results_) code[Axis(r, "arm")] = Axis(r, "code_sha256");
  out += "| arm | median (us) | 95% interval (us) | vs baseline [95%] | verdict | code |\n";
  out += "|---|---:|---|---|---|---|\n";
  for (const v1::Result& r : results_) {
    const std::string arm = Axis(r, "arm");
    std::string median = "", interval = "";
    if (r.metrics_size() > 0) {
      const v1::MetricStats& m = r.metrics(0);
      median = absl::StrFormat("%.4g", m.median());
      interval = absl::StrFormat("%.4g - %.4g", m.low(), m.high());
    }
    if (!r.impossible().empty()) median = absl::StrCat("~~", median, "~~ impossible");
    std::string ratio = "", verdict = "";
    if (const v1::DerivedValue* v = DerivedNamed(r, "vs_baseline")) {
      const v1::DerivedValue* low = DerivedNamed(r, "vs_baseline_low");
      const v1::DerivedValue* high = DerivedNamed(r, "vs_baseline_high");
      ratio = absl::StrFormat("%.4f [%.4f, %.4f]", v->value(), low ? low->value() : 0.0,
                              high ? high->value() : 0.0);
      verdict = absl::StrCat("**", CliName(r.verdict()), "**");
    }
    const std::string hash = Axis(r, "code_sha256");
    std::string code_cell = absl::StrCat("`", hash.substr(0, 12), "`");
    const auto baseline = baselines_.find(arm);
    if (baseline != baselines_.end() && code[baseline->second] == hash && !hash.empty()) {
      code_cell += " identical to the baseline's";
    }
    out += absl::StrFormat("| %s | %s | %s | %s | %s | %s |\n", arm, median, interval, ratio,
                           verdict, code_cell);
  }
  for (const v1::Result& r : results_) {
    if (!r.impossible().empty()) {
      absl::StrAppend(&out, "\n> ", Axis(r, "arm"), ": ", r.impossible(), "\n");
    }
  }
  return out;
}

}  // namespace gpuprobe
