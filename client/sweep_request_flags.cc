#include "client/sweep_request_flags.h"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

ABSL_FLAG(std::optional<int64_t>, experts, std::nullopt,
          "experts in the banks (default $MEMRA_MOEU_EXPERTS, else 512)");
ABSL_FLAG(std::optional<int64_t>, hidden, std::nullopt,
          "model width, a multiple of 16 (default $MEMRA_MOEU_HIDDEN, else 2560)");
ABSL_FLAG(std::optional<int64_t>, ff, std::nullopt,
          "expert width, a multiple of 16 (default $MEMRA_MOEU_FF, else 640)");
ABSL_FLAG(std::optional<int64_t>, selected, std::nullopt,
          "experts per token (default $MEMRA_MOEU_SELECTED, else 10)");
ABSL_FLAG(std::optional<int64_t>, t, std::nullopt,
          "largest token count; the sweep covers t = 1..T (default $MEMRA_MOEU_T, else 6)");
ABSL_FLAG(std::vector<std::string>, t_values, {}, "explicit token counts, e.g. 1,3,6");
ABSL_FLAG(std::vector<std::string>, unions, {},
          "explicit union sizes, each measured at every t where it fits (selected..t*selected), "
          "e.g. 10,30,60 (default the ladder selected, 2*selected, ..., t*selected)");
ABSL_FLAG(std::optional<int64_t>, reps, std::nullopt,
          "reps per arm including the throwaway rep 0 (default $MEMRA_MOEU_REPS, else 20)");
ABSL_FLAG(std::string, precision, "",
          "sample until every arm's gate+up and down medians have a 95% interval within this "
          "share of the median (e.g. 0.5% or 0.005; --reps is then the least number of reps); "
          "default: exactly --reps");
ABSL_FLAG(std::optional<double>, max_seconds, std::nullopt,
          "with --precision: stop sampling after this many seconds of measuring (default 60)");
ABSL_FLAG(std::string, timing, "", "events (default) or graph");
ABSL_FLAG(std::string, cache, "", "warm (default) or cold");
ABSL_FLAG(bool, require_clean, false,
          "fail the job when telemetry sees a throttle reason or another compute process on the "
          "device (default: record and flag the rows)");
ABSL_FLAG(std::string, order, "",
          "arms within each rep: fixed (default, the seed's), rotate, or shuffle (seeded)");
ABSL_FLAG(std::vector<std::string>, variant, {}, "per-slot (default), union, floor, or all");
ABSL_FLAG(std::optional<uint64_t>, seed, std::nullopt, "seed of banks, activations, routing");
ABSL_FLAG(std::vector<std::string>, label, {}, "labels stored with the job: k=v,k2=v2");
ABSL_FLAG(std::string, dump, "",
          "check: a local directory that receives the check's inputs and outputs as .npy files "
          "(the job's artifacts, fetched from the daemon)");

namespace gpuprobe {
namespace {

absl::Status Invalid(std::string_view what, std::string_view value, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: \"%s\" %s", what, value, why));
}

absl::StatusOr<uint32_t> ToUint32(std::string_view what, int64_t value) {
  if (value < 0 || value > std::numeric_limits<uint32_t>::max()) {
    return Invalid(what, absl::StrCat(value), "must be a non-negative 32-bit integer");
  }
  return static_cast<uint32_t>(value);
}

// The flag's value, else the environment variable's, else nothing.
absl::StatusOr<std::optional<uint32_t>> FlagOrEnv(const absl::Flag<std::optional<int64_t>>& flag,
                                                  const char* flag_name, const char* env_name,
                                                  const EnvLookup& env) {
  if (std::optional<int64_t> v = absl::GetFlag(flag)) {
    ASSIGN_OR_RETURN(uint32_t value, ToUint32(absl::StrCat("--", flag_name), *v));
    return value;
  }
  if (std::optional<std::string> text = env(env_name)) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(*text, &v)) return Invalid(env_name, *text, "is not an integer");
    ASSIGN_OR_RETURN(uint32_t value, ToUint32(env_name, v));
    return value;
  }
  return std::optional<uint32_t>();
}

absl::Status AddList(const std::vector<std::string>& items, const char* flag_name,
                     google::protobuf::RepeatedField<uint32_t>* out) {
  for (const std::string& item : items) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(item, &v)) {
      return Invalid(absl::StrCat("--", flag_name), item, "is not an integer");
    }
    ASSIGN_OR_RETURN(uint32_t value, ToUint32(absl::StrCat("--", flag_name), v));
    out->Add(value);
  }
  return absl::OkStatus();
}

absl::Status SetVariants(const std::vector<std::string>& names, v1::SweepRequest& request) {
  for (const std::string& name : names) {
    if (name == "per-slot") {
      request.add_variants(v1::KERNEL_VARIANT_PER_SLOT);
    } else if (name == "union") {
      request.add_variants(v1::KERNEL_VARIANT_UNION);
    } else if (name == "floor") {
      request.add_variants(v1::KERNEL_VARIANT_FLOOR);
    } else if (name == "all") {
      request.add_variants(v1::KERNEL_VARIANT_PER_SLOT);
      request.add_variants(v1::KERNEL_VARIANT_UNION);
      request.add_variants(v1::KERNEL_VARIANT_FLOOR);
    } else {
      return Invalid("--variant", name, "is not one of per-slot, union, floor, all");
    }
  }
  return absl::OkStatus();
}

struct IntField {
  const absl::Flag<std::optional<int64_t>>& flag;
  const char* flag_name;
  const char* env_name;
  std::function<void(uint32_t)> set;
};

absl::Status SetFields(std::initializer_list<IntField> fields, const EnvLookup& env) {
  for (const IntField& field : fields) {
    ASSIGN_OR_RETURN(std::optional<uint32_t> value,
                     FlagOrEnv(field.flag, field.flag_name, field.env_name, env));
    if (value) field.set(*value);
  }
  return absl::OkStatus();
}

absl::Status SetGeometry(v1::Geometry* g, const EnvLookup& env) {
  return SetFields(
      {{FLAGS_experts, "experts", "MEMRA_MOEU_EXPERTS", [g](uint32_t v) { g->set_experts(v); }},
       {FLAGS_hidden, "hidden", "MEMRA_MOEU_HIDDEN", [g](uint32_t v) { g->set_hidden(v); }},
       {FLAGS_ff, "ff", "MEMRA_MOEU_FF", [g](uint32_t v) { g->set_ff(v); }},
       {FLAGS_selected, "selected", "MEMRA_MOEU_SELECTED",
        [g](uint32_t v) { g->set_selected(v); }}},
      env);
}

}  // namespace

absl::Status LabelsFromFlags(google::protobuf::Map<std::string, std::string>& labels) {
  for (const std::string& label : absl::GetFlag(FLAGS_label)) {
    std::pair<std::string, std::string> kv = absl::StrSplit(label, absl::MaxSplits('=', 1));
    if (kv.first.empty() || label.find('=') == std::string::npos) {
      return Invalid("--label", label, "is not of the form key=value");
    }
    labels[kv.first] = kv.second;
  }
  return absl::OkStatus();
}

EnvLookup ProcessEnv() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value == nullptr ? std::nullopt : std::optional<std::string>(value);
  };
}

absl::StatusOr<double> ParseFraction(std::string_view flag, std::string_view text) {
  absl::string_view number(text.data(), text.size());
  const bool percent = absl::ConsumeSuffix(&number, "%");
  double value = 0;
  if (!absl::SimpleAtod(number, &value) || !(value > 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a positive number like 2%% or 0.02", flag));
  }
  return percent ? value / 100.0 : value;
}

absl::StatusOr<v1::CheckRequest> CheckRequestFromFlags(const EnvLookup& env) {
  v1::CheckRequest request;
  RETURN_IF_ERROR(SetGeometry(request.mutable_geometry(), env));
  RETURN_IF_ERROR(SetFields(
      {{FLAGS_t, "t", "MEMRA_MOEU_T", [&request](uint32_t v) { request.set_t(v); }}}, env));
  RETURN_IF_ERROR(AddList(absl::GetFlag(FLAGS_unions), "unions", request.mutable_unions()));
  v1::SweepRequest variants;
  RETURN_IF_ERROR(SetVariants(absl::GetFlag(FLAGS_variant), variants));
  *request.mutable_variants() = variants.variants();
  if (std::optional<uint64_t> seed = absl::GetFlag(FLAGS_seed)) request.set_seed(*seed);
  // The daemon keeps the dump as the job's artifacts; the CLI fetches them into --dump DIR.
  request.set_dump(!absl::GetFlag(FLAGS_dump).empty());
  RETURN_IF_ERROR(LabelsFromFlags(*request.mutable_labels()));
  return request;
}

absl::StatusOr<v1::SweepRequest> SweepRequestFromFlags(const EnvLookup& env) {
  v1::SweepRequest request;
  RETURN_IF_ERROR(SetGeometry(request.mutable_geometry(), env));
  RETURN_IF_ERROR(SetFields(
      {{FLAGS_t, "t", "MEMRA_MOEU_T", [&request](uint32_t v) { request.set_t_max(v); }},
       {FLAGS_reps, "reps", "MEMRA_MOEU_REPS", [&request](uint32_t v) { request.set_reps(v); }}},
      env));
  RETURN_IF_ERROR(AddList(absl::GetFlag(FLAGS_t_values), "t-values", request.mutable_t_values()));
  RETURN_IF_ERROR(AddList(absl::GetFlag(FLAGS_unions), "unions", request.mutable_unions()));

  const std::string timing = absl::GetFlag(FLAGS_timing);
  if (timing == "events") {
    request.set_timing(v1::TIMING_MODE_EVENTS);
  } else if (timing == "graph") {
    request.set_timing(v1::TIMING_MODE_GRAPH);
  } else if (!timing.empty()) {
    return Invalid("--timing", timing, "is not one of events, graph");
  }
  const std::string cache = absl::GetFlag(FLAGS_cache);
  if (cache == "warm") {
    request.set_cache(v1::CACHE_MODE_WARM);
  } else if (cache == "cold") {
    request.set_cache(v1::CACHE_MODE_COLD);
  } else if (!cache.empty()) {
    return Invalid("--cache", cache, "is not one of warm, cold");
  }
  const std::string order = absl::GetFlag(FLAGS_order);
  if (order == "fixed") {
    request.set_order(v1::ARM_ORDER_FIXED);
  } else if (order == "rotate") {
    request.set_order(v1::ARM_ORDER_ROTATE);
  } else if (order == "shuffle") {
    request.set_order(v1::ARM_ORDER_SHUFFLE);
  } else if (!order.empty()) {
    return Invalid("--order", order, "is not one of fixed, rotate, shuffle");
  }
  request.set_require_clean(absl::GetFlag(FLAGS_require_clean));
  if (const std::string precision = absl::GetFlag(FLAGS_precision); !precision.empty()) {
    ASSIGN_OR_RETURN(const double fraction, ParseFraction("--precision", precision));
    request.set_precision(fraction);
  }
  if (std::optional<double> seconds = absl::GetFlag(FLAGS_max_seconds)) {
    request.set_max_seconds(*seconds);
  }
  RETURN_IF_ERROR(SetVariants(absl::GetFlag(FLAGS_variant), request));
  if (std::optional<uint64_t> seed = absl::GetFlag(FLAGS_seed)) request.set_seed(*seed);
  RETURN_IF_ERROR(LabelsFromFlags(*request.mutable_labels()));
  return request;
}

}  // namespace gpuprobe
