#include "client/sweep_request_flags.h"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/labels.h"
#include "common/status_macros.h"

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
absl::StatusOr<std::optional<uint32_t>> FlagOrEnv(const std::optional<int64_t>& flag,
                                                  const char* flag_name, const char* env_name,
                                                  const EnvLookup& env) {
  if (const std::optional<int64_t>& v = flag) {
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
    } else if (name == "floor-distinct") {
      request.add_variants(v1::KERNEL_VARIANT_FLOOR_DISTINCT);
    } else if (name == "all") {
      request.add_variants(v1::KERNEL_VARIANT_PER_SLOT);
      request.add_variants(v1::KERNEL_VARIANT_UNION);
      request.add_variants(v1::KERNEL_VARIANT_FLOOR);
      request.add_variants(v1::KERNEL_VARIANT_FLOOR_DISTINCT);
    } else {
      return Invalid("--variant", name,
                     "is not one of per-slot, union, floor, floor-distinct, all");
    }
  }
  return absl::OkStatus();
}

struct IntField {
  const std::optional<int64_t>& flag;
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

absl::Status SetGeometry(const ClientFlags& f, v1::Geometry* g, const EnvLookup& env) {
  return SetFields(
      {{f.experts, "experts", "MEMRA_MOEU_EXPERTS", [g](uint32_t v) { g->set_experts(v); }},
       {f.hidden, "hidden", "MEMRA_MOEU_HIDDEN", [g](uint32_t v) { g->set_hidden(v); }},
       {f.ff, "ff", "MEMRA_MOEU_FF", [g](uint32_t v) { g->set_ff(v); }},
       {f.selected, "selected", "MEMRA_MOEU_SELECTED", [g](uint32_t v) { g->set_selected(v); }}},
      env);
}

}  // namespace

absl::Status LabelsFromFlags(const ClientFlags& flags,
                             google::protobuf::Map<std::string, std::string>& labels) {
  for (const std::string& label : flags.label) {
    if (absl::Status s = ParseLabels("--label", label, labels); !s.ok()) return s;
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

absl::StatusOr<v1::CheckRequest> CheckRequestFromFlags(const ClientFlags& f, const EnvLookup& env) {
  v1::CheckRequest request;
  RETURN_IF_ERROR(SetGeometry(f, request.mutable_geometry(), env));
  RETURN_IF_ERROR(
      SetFields({{f.t, "t", "MEMRA_MOEU_T", [&request](uint32_t v) { request.set_t(v); }}}, env));
  RETURN_IF_ERROR(AddList(f.unions, "unions", request.mutable_unions()));
  v1::SweepRequest variants;
  RETURN_IF_ERROR(SetVariants(f.variant, variants));
  *request.mutable_variants() = variants.variants();
  if (f.seed) request.set_seed(*f.seed);
  // The daemon keeps the dump as the job's artifacts; the CLI fetches them into --dump DIR.
  request.set_dump(!f.dump.empty());
  RETURN_IF_ERROR(LabelsFromFlags(f, *request.mutable_labels()));
  return request;
}

absl::StatusOr<v1::SweepRequest> SweepRequestFromFlags(const ClientFlags& f, const EnvLookup& env) {
  v1::SweepRequest request;
  RETURN_IF_ERROR(SetGeometry(f, request.mutable_geometry(), env));
  RETURN_IF_ERROR(SetFields(
      {{f.t, "t", "MEMRA_MOEU_T", [&request](uint32_t v) { request.set_t_max(v); }},
       {f.reps, "reps", "MEMRA_MOEU_REPS", [&request](uint32_t v) { request.set_reps(v); }}},
      env));
  RETURN_IF_ERROR(AddList(f.t_values, "t-values", request.mutable_t_values()));
  RETURN_IF_ERROR(AddList(f.unions, "unions", request.mutable_unions()));

  const std::string& timing = f.timing;
  if (timing == "events") {
    request.set_timing(v1::TIMING_MODE_EVENTS);
  } else if (timing == "graph") {
    request.set_timing(v1::TIMING_MODE_GRAPH);
  } else if (!timing.empty()) {
    return Invalid("--timing", timing, "is not one of events, graph");
  }
  const std::string& cache = f.cache;
  if (cache == "warm") {
    request.set_cache(v1::CACHE_MODE_WARM);
  } else if (cache == "cold") {
    request.set_cache(v1::CACHE_MODE_COLD);
  } else if (!cache.empty()) {
    return Invalid("--cache", cache, "is not one of warm, cold");
  }
  const std::string& order = f.order;
  if (order == "fixed") {
    request.set_order(v1::ARM_ORDER_FIXED);
  } else if (order == "rotate") {
    request.set_order(v1::ARM_ORDER_ROTATE);
  } else if (order == "shuffle") {
    request.set_order(v1::ARM_ORDER_SHUFFLE);
  } else if (!order.empty()) {
    return Invalid("--order", order, "is not one of fixed, rotate, shuffle");
  }
  request.set_require_clean(f.require_clean);
  if (const std::string& precision = f.precision; !precision.empty()) {
    ASSIGN_OR_RETURN(const double fraction, ParseFraction("--precision", precision));
    request.set_precision(fraction);
  }
  if (f.max_seconds) request.set_max_seconds(*f.max_seconds);
  if (f.blocks) {
    ASSIGN_OR_RETURN(const uint32_t blocks, ToUint32("--blocks", *f.blocks));
    request.set_blocks(blocks);
  }
  RETURN_IF_ERROR(SetVariants(f.variant, request));
  if (f.seed) request.set_seed(*f.seed);
  RETURN_IF_ERROR(LabelsFromFlags(f, *request.mutable_labels()));
  return request;
}

}  // namespace gpuprobe
