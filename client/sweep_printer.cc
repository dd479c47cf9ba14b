#include "client/sweep_printer.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/csv.h"
#include "client/proto_names.h"
#include "common/api_json.h"

namespace gpuprobe {
namespace {

constexpr double kMiB = 1048576.0;

uint32_t TMax(const v1::ResolvedSweep& s) {
  return s.t_values().empty() ? 0 : *std::max_element(s.t_values().begin(), s.t_values().end());
}

bool SeveralVariants(const v1::ResolvedSweep& s) {
  return std::any_of(s.arms().begin(), s.arms().end(),
                     [&](const v1::Arm& a) { return a.variant() != s.arms(0).variant(); });
}

// One arm of a moe-union sweep, read from its Result by the names moe-union gives: axes variant,
// t, slots, union; metrics gu_us and down_us; derived values such as section_us.
class MoeArm {
 public:
  explicit MoeArm(const v1::Result& r) : r_(r) {
    for (const v1::MetricStats& m : r.metrics()) {
      if (m.name() == "gu_us") gu_ = &m;
      if (m.name() == "down_us") down_ = &m;
    }
  }
  const v1::MetricStats& gu() const { return *gu_; }
  const v1::MetricStats& down() const { return *down_; }
  // An axis's value as text ("per-slot", "6"); empty when the arm has no such axis.
  std::string Axis(const std::string& name) const {
    for (const v1::AxisValue& a : r_.axes()) {
      if (a.name() == name) return a.has_int_value() ? absl::StrCat(a.int_value()) : a.text_value();
    }
    return "";
  }
  // A derived value; absent where the job had none (no reference row, no calibrated read).
  std::optional<double> Derived(const std::string& name) const {
    for (const v1::DerivedValue& d : r_.derived()) {
      if (d.name() == name) return d.value();
    }
    return std::nullopt;
  }
  double DerivedOr0(const std::string& name) const { return Derived(name).value_or(0.0); }
  const v1::Result& result() const { return r_; }

 private:
  const v1::Result& r_;
  const v1::MetricStats kNone;
  const v1::MetricStats* gu_ = &kNone;
  const v1::MetricStats* down_ = &kNone;
};

// Achieved bandwidth as a share of the calibrated read; "-" where the backend has none.
std::string Percent(std::optional<double> pct) {
  return pct ? absl::StrFormat("%.1f%%", *pct) : "-";
}

// The seed's ratio cell: "0.5000x", or "-" without a reference row.
std::string Ratio(const MoeArm& a) {
  const std::optional<double> ratio = a.Derived("vs_reference");
  return ratio ? absl::StrFormat("%.4fx", *ratio) : "-";
}

// vs_reference's interval: "[0.9812, 1.0034]", or "-" without a reference row.
std::string RatioInterval(const MoeArm& a) {
  const std::optional<double> low = a.Derived("vs_reference_low");
  return low ? absl::StrFormat("[%.4f, %.4f]", *low, a.DerivedOr0("vs_reference_high")) : "-";
}

// The seed's columns, formatted as it formats them.
std::vector<std::string> SeedCells(const MoeArm& a) {
  return {a.Axis("t"),
          a.Axis("slots"),
          a.Axis("union"),
          absl::StrFormat("%.1f", a.gu().median()),
          absl::StrFormat("%.1f", a.down().median()),
          absl::StrFormat("%.1f", a.DerivedOr0("section_us")),
          absl::StrFormat("%.4f", a.gu().spread()),
          absl::StrFormat("%.4f", a.down().spread()),
          absl::StrFormat("%.3f", a.DerivedOr0("gu_bw_vs_union_tbps")),
          absl::StrFormat("%.3f", a.DerivedOr0("gu_bw_vs_slots_tbps")),
          Ratio(a)};
}

std::vector<std::string> SeedHeader(const v1::ResolvedSweep& s) {
  return {"t",
          "slots",
          "union",
          "gu_us",
          "down_us",
          "section_us",
          "gu_spread",
          "dn_spread",
          "gu_BW_vs_union",
          "gu_BW_vs_slots",
          absl::StrFormat("vs_t%d_full", TMax(s))};
}

void FinishedComment(std::ostream& out, const v1::JobFinished& f) {
  if (f.state() != v1::JOB_STATE_SUCCEEDED) {
    out << "# job " << StateName(f.state()) << ": " << f.error_message() << "\n";
  }
}

// The seed's output: `#` comments, a header, tab-separated rows, `#` comments.
class TsvPrinter final : public SweepPrinter {
 public:
  explicit TsvPrinter(std::ostream& out) : out_(out) {}

  void Started(const v1::JobStarted& started) override {
    const v1::ResolvedSweep& s = started.sweep();
    t_max_ = TMax(s);
    variant_column_ = SeveralVariants(s);
    const uint64_t gu = s.gu_expert_bytes(), dn = s.down_expert_bytes();
    out_ << "# moe_union_probe (SYNTHETIC banks, no checkpoint — traffic/latency only)\n";
    out_ << absl::StrFormat("# geometry experts=%d hidden=%d ff=%d selected=%d t=%d reps=%d\n",
                            s.experts(), s.hidden(), s.ff(), s.selected(), t_max_, s.reps());
    out_ << absl::StrFormat(
        "# per-expert bytes gate+up=%d (%.3f MiB) down=%d (%.3f MiB) total=%d (%.3f MiB)\n", gu,
        gu / kMiB, dn, dn / kMiB, gu + dn, (gu + dn) / kMiB);
    out_ << absl::StrFormat("# device %s timing=%s cache=%s seed=%d\n", started.device(),
                            TimingName(s.timing()), CacheName(s.cache()), s.seed());
    std::vector<std::string> header = SeedHeader(s);
    if (variant_column_) header.push_back("variant");
    out_ << absl::StrJoin(header, "\t") << "\n" << std::flush;
  }

  void Result(const v1::Result& result) override {
    const MoeArm arm(result);
    std::vector<std::string> cells = SeedCells(arm);
    if (variant_column_) cells.push_back(arm.Axis("variant"));
    out_ << absl::StrJoin(cells, "\t") << "\n" << std::flush;
  }

  void Finished(const v1::JobFinished& f) override {
    FinishedComment(out_, f);
    out_ << "# arms INTERLEAVED rep by rep (LAW:interleaved-ab), rep 0 a warmed throwaway for "
            "every arm; gu_spread/dn_spread = (max-min)/median over the arm's reps.\n";
    out_ << "# gu_BW_vs_union = TB/s if only the distinct experts' bytes reach DRAM; "
            "gu_BW_vs_slots = TB/s if every slot's bytes do. The true DRAM rate cannot exceed "
            "the card's peak, so whichever column stays under peak is the traffic that is "
            "real.\n";
    out_ << absl::StrFormat(
        "# READ vs_t%d_full AGAINST THE SPREAD COLUMNS: if an arm's gain is smaller than its "
        "own spread, the lever is unmeasurable at that union, not merely small.\n",
        t_max_);
    out_ << std::flush;
  }

 private:
  std::ostream& out_;
  uint32_t t_max_ = 0;
  bool variant_column_ = false;
};

// Fixed-width columns, so that rows line up as they stream in.
class TablePrinter final : public SweepPrinter {
 public:
  explicit TablePrinter(std::ostream& out) : out_(out) {}

  void Started(const v1::JobStarted& started) override {
    const v1::ResolvedSweep& s = started.sweep();
    out_ << absl::StrFormat(
        "device %s | timing %s | cache %s | seed %d\n"
        "geometry experts=%d hidden=%d ff=%d selected=%d | per expert gate+up %d B, down %d B "
        "| %d arms x %d reps\n",
        started.device(), TimingName(s.timing()), CacheName(s.cache()), s.seed(), s.experts(),
        s.hidden(), s.ff(), s.selected(), s.gu_expert_bytes(), s.down_expert_bytes(), s.arms_size(),
        s.reps());
    if (started.device().rfind("cpu", 0) == 0) {
      out_ << "note: cpu backend - reference kernels timed on the host, not GPU figures\n";
    }
    std::vector<std::string> header = {"variant"};
    for (const std::string& h : SeedHeader(s)) header.push_back(h);
    header.push_back("gu_%bw");
    header.push_back("dn_%bw");
    header.push_back("vs_ref 95%");
    header.push_back("verdict");
    PrintCells(header);
  }

  void Result(const v1::Result& result) override {
    const MoeArm arm(result);
    std::vector<std::string> cells = {arm.Axis("variant")};
    for (std::string& c : SeedCells(arm)) cells.push_back(std::move(c));
    cells.push_back(Percent(arm.Derived("gu_pct_of_read")));
    cells.push_back(Percent(arm.Derived("down_pct_of_read")));
    cells.push_back(RatioInterval(arm));
    cells.push_back(VerdictName(result.verdict()));
    PrintCells(cells);
    if (!result.disturbance().empty()) disturbance_ = result.disturbance();
  }

  void Finished(const v1::JobFinished& f) override {
    if (!disturbance_.empty()) {
      out_ << "warning: the device was disturbed during the sweep (" << disturbance_
           << "); the rows may not be what it does undisturbed\n";
    }
    if (f.state() == v1::JOB_STATE_SUCCEEDED) {
      out_ << absl::StrFormat("%d rows in %.2f s; rep 0 dropped, medians over %s\n", f.rows(),
                              f.elapsed_s(), "the kept reps");
    }
    out_ << std::flush;
  }

 private:
  void PrintCells(const std::vector<std::string>& cells) {
    static constexpr int kWidths[] = {8, 3, 5, 5, 10, 10, 10, 9, 9, 14, 14, 11, 7, 7, 18, 7};
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) {
      absl::StrAppend(&line, i == 0 ? "" : " ", absl::StrFormat("%*s", kWidths[i], cells[i]));
    }
    out_ << line << "\n" << std::flush;
  }

  std::ostream& out_;
  std::string disturbance_;
};

// Every field of every row, for spreadsheets and scripts: the job (id, probe, labels), its
// resolved sweep, the arm, then the row's values, named as in the API (protobuf field names);
// numbers in full, absent values empty. `sweep`, `watch` and `show` print this one schema.
class CsvPrinter final : public SweepPrinter {
 public:
  explicit CsvPrinter(std::ostream& out) : out_(out) {}

  void Started(const v1::JobStarted& started) override {
    sweep_ = started.sweep();
    out_ << CsvLine({"job_id",
                     "probe",
                     "labels",
                     "experts",
                     "hidden",
                     "ff",
                     "selected",
                     "seed",
                     "reps",
                     "blocks",
                     "order",
                     "timing",
                     "cache",
                     "device",
                     "attempt",
                     "arm_index",
                     "variant",
                     "t",
                     "slots",
                     "union_size",
                     "gu_us",
                     "down_us",
                     "section_us",
                     "gu_spread",
                     "dn_spread",
                     "gu_min_us",
                     "gu_max_us",
                     "down_min_us",
                     "down_max_us",
                     "gu_us_low",
                     "gu_us_high",
                     "down_us_low",
                     "down_us_high",
                     "kept_reps",
                     "gu_read_bytes",
                     "down_read_bytes",
                     "gu_bw_vs_union_tbps",
                     "gu_bw_vs_slots_tbps",
                     "gu_pct_of_read_bw",
                     "down_pct_of_read_bw",
                     "vs_reference",
                     "vs_reference_low",
                     "vs_reference_high",
                     "verdict",
                     "sampling_end",
                     "disturbance",
                     "block_section_us"})
         << std::flush;
  }

  void Result(const v1::Result& r) override {
    const MoeArm a(r);
    auto optional = [](std::optional<double> v) { return v ? CsvNumber(*v) : ""; };
    out_ << CsvLine({r.job_id().empty() ? job().job_id : r.job_id(),
                     job().probe,
                     job().labels,
                     absl::StrCat(sweep_.experts()),
                     absl::StrCat(sweep_.hidden()),
                     absl::StrCat(sweep_.ff()),
                     absl::StrCat(sweep_.selected()),
                     absl::StrCat(sweep_.seed()),
                     absl::StrCat(sweep_.reps()),
                     absl::StrCat(std::max(1u, sweep_.blocks())),
                     CliName(sweep_.order()),
                     TimingName(sweep_.timing()),
                     CacheName(sweep_.cache()),
                     r.device(),
                     absl::StrCat(r.attempt()),
                     absl::StrCat(r.arm_index()),
                     a.Axis("variant"),
                     a.Axis("t"),
                     a.Axis("slots"),
                     a.Axis("union"),
                     CsvNumber(a.gu().median()),
                     CsvNumber(a.down().median()),
                     CsvNumber(a.DerivedOr0("section_us")),
                     CsvNumber(a.gu().spread()),
                     CsvNumber(a.down().spread()),
                     CsvNumber(a.gu().min()),
                     CsvNumber(a.gu().max()),
                     CsvNumber(a.down().min()),
                     CsvNumber(a.down().max()),
                     CsvNumber(a.gu().low()),
                     CsvNumber(a.gu().high()),
                     CsvNumber(a.down().low()),
                     CsvNumber(a.down().high()),
                     absl::StrCat(a.gu().kept()),
                     absl::StrCat(static_cast<uint64_t>(a.DerivedOr0("gu_read_bytes"))),
                     absl::StrCat(static_cast<uint64_t>(a.DerivedOr0("down_read_bytes"))),
                     CsvNumber(a.DerivedOr0("gu_bw_vs_union_tbps")),
                     CsvNumber(a.DerivedOr0("gu_bw_vs_slots_tbps")),
                     optional(a.Derived("gu_pct_of_read")),
                     optional(a.Derived("down_pct_of_read")),
                     optional(a.Derived("vs_reference")),
                     optional(a.Derived("vs_reference_low")),
                     optional(a.Derived("vs_reference_high")),
                     CliName(r.verdict()),
                     CliName(r.sampling_end()),
                     r.disturbance(),
                     absl::StrJoin(r.block_section_us(), ";",
                                   [](std::string* out, double v) { out->append(CsvNumber(v)); })})
         << std::flush;
  }

  void Finished(const v1::JobFinished&) override {}

 private:
  std::ostream& out_;
  v1::ResolvedSweep sweep_;
};

// Protobuf's JSON mapping of each arm's Result.
class JsonPrinter final : public SweepPrinter {
 public:
  explicit JsonPrinter(std::ostream& out) : out_(out) {}

  void Started(const v1::JobStarted&) override {}

  void Result(const v1::Result& result) override {
    if (!result.job_id().empty() || job().job_id.empty()) {
      out_ << ApiJson(result) << "\n" << std::flush;
      return;
    }
    v1::Result stamped = result;  // stored by a daemon that did not stamp its rows
    stamped.set_job_id(job().job_id);
    out_ << ApiJson(stamped) << "\n" << std::flush;
  }

  void Finished(const v1::JobFinished&) override {}

 private:
  std::ostream& out_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SweepPrinter>> MakeSweepPrinter(std::string_view format,
                                                               std::ostream& out) {
  if (format == "table") return std::make_unique<TablePrinter>(out);
  if (format == "tsv") return std::make_unique<TsvPrinter>(out);
  if (format == "csv") return std::make_unique<CsvPrinter>(out);
  if (format == "json") return std::make_unique<JsonPrinter>(out);
  return absl::InvalidArgumentError(
      absl::StrFormat("--format: \"%s\" is not one of table, tsv, csv, json", format));
}

}  // namespace gpuprobe
