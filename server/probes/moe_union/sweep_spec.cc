#include "server/probes/moe_union/sweep_spec.h"

#include <algorithm>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "common/param_spec.h"
#include "common/status_macros.h"
#include "server/probes/moe_union/moe_union_mapping.h"

namespace gpuprobe {
namespace {

absl::Status OutOfRange(std::string_view field, int64_t value, std::string_view limit) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %d is out of range: %s", field, value, limit));
}

absl::Status ListLength(std::string_view field, size_t size, int limit) {
  if (static_cast<int64_t>(size) > limit) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d entries is more than the limit of %d", field, size, limit));
  }
  return absl::OkStatus();
}

// The explicit token counts, else 1..t_max; ascending, distinct.
std::vector<int> ResolveTValues(const v1::SweepRequest& r) {
  std::vector<int> t_values(r.t_values().begin(), r.t_values().end());
  if (t_values.empty()) {
    for (int t = 1; t <= static_cast<int>(r.t_max()); ++t) t_values.push_back(t);
  }
  std::sort(t_values.begin(), t_values.end());
  t_values.erase(std::unique(t_values.begin(), t_values.end()), t_values.end());
  return t_values;
}

int MostUnion(const MoeGeometry& g, int t) {
  return static_cast<int>(std::min<int64_t>(static_cast<int64_t>(t) * g.selected, g.experts));
}

// Explicit unions: each is measured at every t where it fits, [selected, min(t*selected,
// experts)]; a union that fits no t, or a t that no union fits, is refused.
absl::StatusOr<std::vector<int>> ResolveUnions(const v1::SweepRequest& r, const MoeGeometry& g,
                                               const std::vector<int>& t_values) {
  if (r.unions().empty()) return std::vector<int>{};
  const int most = MostUnion(g, t_values.back());  // t_values is sorted
  std::set<int> unions;
  for (int64_t u : r.unions()) {
    if (u < g.selected || u > most) {
      return OutOfRange(
          "unions", u,
          absl::StrFormat("each union must be in [selected=%d, min(t*selected=%d, experts=%d)=%d]"
                          " at the sweep's largest t=%d",
                          g.selected, t_values.back() * g.selected, g.experts, most,
                          t_values.back()));
    }
    unions.insert(static_cast<int>(u));
  }
  for (int t : t_values) {
    if (*unions.begin() > MostUnion(g, t)) {
      return OutOfRange("t_values", t,
                        absl::StrFormat("no union of `unions` fits t=%d: its unions are in "
                                        "[selected=%d, %d]; add one, or leave t=%d out",
                                        t, g.selected, MostUnion(g, t), t));
    }
  }
  return std::vector<int>(unions.begin(), unions.end());
}

}  // namespace

absl::Status CheckLabels(const std::map<std::string, std::string>& labels, const SweepLimits& l) {
  RETURN_IF_ERROR(ListLength("labels", labels.size(), l.max_labels));
  for (const auto& [key, value] : labels) {
    if (key.empty() || static_cast<int>(key.size()) > l.max_label_bytes ||
        static_cast<int>(value.size()) > l.max_label_bytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "labels: key \"%s\" must be non-empty and key and value at most %d bytes each",
          key.substr(0, 32), l.max_label_bytes));
    }
    // Filters name labels as KEY=VALUE in lists split at ','; a control character (a line break,
    // a tab) splits a table's line or cell.
    const auto bad = [](const std::string& text, absl::string_view also) {
      for (const char c : text) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || also.find(c) != also.npos) {
          return true;
        }
      }
      return false;
    };
    if (bad(key, "=,") || bad(value, ",")) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "labels: key \"%s\": a key may not hold '=', ',' or a control character, nor a value "
          "',' or a control character (filters list KEY=VALUE pairs split at ',')",
          absl::CHexEscape(key.substr(0, 32))));
    }
  }
  return absl::OkStatus();
}

int MostReps(const SweepSpec& spec, const SweepLimits& l) {
  const int64_t arms =
      std::max<int64_t>(1, static_cast<int64_t>(ExpandArms(spec).size())) * spec.blocks;
  return static_cast<int>(
      std::max<int64_t>(spec.reps, std::min<int64_t>(l.max_reps, l.max_arm_reps / arms)));
}

absl::StatusOr<SweepSpec> ResolveSweep(v1::SweepRequest r, const SweepLimits& l) {
  RETURN_IF_ERROR(CompleteParams(r));
  ASSIGN_OR_RETURN(const SamplingRule rule,
                   ResolveSamplingRule(
                       r.has_precision() ? std::optional<double>(r.precision()) : std::nullopt,
                       r.has_max_seconds() ? std::optional<double>(r.max_seconds()) : std::nullopt,
                       l.max_seconds));
  ASSIGN_OR_RETURN(SweepSpec spec, SpecOfFilled(r));
  const MoeGeometry& g = spec.geometry;
  if (g.selected > g.experts) {
    return OutOfRange("selected", g.selected,
                      absl::StrFormat("must be in [1, experts=%d]", g.experts));
  }
  spec.t_values = ResolveTValues(r);
  ASSIGN_OR_RETURN(spec.unions, ResolveUnions(r, g, spec.t_values));
  spec.precision = rule.precision;
  spec.max_seconds = rule.max_seconds;
  std::vector<KernelVariant> variants;
  for (KernelVariant v : spec.variants) {
    if (std::find(variants.begin(), variants.end(), v) == variants.end()) variants.push_back(v);
  }
  spec.variants = std::move(variants);
  spec.labels.insert(r.labels().begin(), r.labels().end());
  RETURN_IF_ERROR(CheckLabels(spec.labels, l));

  const int64_t arms = static_cast<int64_t>(ExpandArms(spec).size());
  if (arms > l.max_arms) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "arms: the sweep has %d arms, more than the limit of %d", arms, l.max_arms));
  }
  if (arms * spec.reps * spec.blocks > l.max_arm_reps) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reps: %d arms x %d reps x %d blocks = %d launch pairs, more than the limit of %d", arms,
        spec.reps, spec.blocks, arms * spec.reps * spec.blocks, l.max_arm_reps));
  }
  return spec;
}

std::vector<Arm> ExpandArms(const SweepSpec& spec) {
  const MoeGeometry& g = spec.geometry;
  std::vector<Arm> arms;
  for (KernelVariant variant : spec.variants) {
    for (int t : spec.t_values) {
      const int slots = t * g.selected;
      std::vector<int> unions;
      for (int u : spec.unions) {
        if (u <= MostUnion(g, t)) unions.push_back(u);
      }
      if (spec.unions.empty()) {
        for (int u = g.selected; u <= slots; u += g.selected)
          unions.push_back(std::min(u, g.experts));
        unions.erase(std::unique(unions.begin(), unions.end()), unions.end());
      }
      for (int u : unions) arms.push_back({variant, t, slots, u});
    }
  }
  return arms;
}

int64_t EstimateDeviceBytes(const SweepSpec& spec, const std::vector<Arm>& arms) {
  const MoeGeometry& g = spec.geometry;
  // The cuda backend keeps the codes and scales twice (checkpoint layout for the floor, sel
  // layout for the sel kernels).
  int64_t bytes = BankBytes(g) + g.experts * (GateUpExpertBytes(g) + DownExpertBytes(g));
  bytes += g.experts * GateUpExpertBytes(g);  // more than any one tensor, moved by PlaceBanks
  for (const Arm& arm : arms) {
    bytes += int64_t{4} * arm.t * g.hidden;                   // x
    bytes += int64_t{4} * arm.slots * (g.ff + g.hidden + 1);  // h, y, sel
  }
  return bytes;
}

}  // namespace gpuprobe
