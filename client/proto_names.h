// The command-line names of the API's enums, as users type them in flags.
#pragma once

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/enum_names.h"
#include "google/protobuf/generated_enum_reflection.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

// A value this client does not know (a newer daemon's), shown as such.
inline std::string UnknownName(int value) { return absl::StrCat("unknown (", value, ")"); }

// Any API enum's value by its short name (common/enum_names.h); "" for UNSPECIFIED (absent),
// UnknownName for a value this client does not know.
template <typename Enum>
std::string CliName(Enum value) {
  const google::protobuf::EnumValueDescriptor* v =
      google::protobuf::GetEnumDescriptor<Enum>()->FindValueByNumber(value);
  if (v == nullptr) return UnknownName(value);
  if (v->number() == 0) return "";
  return ShortEnumName(*v);
}

// "queued", "running", "succeeded", ...
inline std::string StateName(v1::JobState s) {
  if (!v1::JobState_IsValid(s)) return UnknownName(s);
  return absl::AsciiStrToLower(v1::JobState_Name(s).substr(std::string("JOB_STATE_").size()));
}

inline std::string VariantName(v1::KernelVariant v) {
  switch (v) {
    case v1::KERNEL_VARIANT_UNION:
      return "union";
    case v1::KERNEL_VARIANT_FLOOR:
      return "floor";
    case v1::KERNEL_VARIANT_FLOOR_DISTINCT:
      return "floor-distinct";
    case v1::KERNEL_VARIANT_PER_SLOT:
    case v1::KERNEL_VARIANT_UNSPECIFIED:
      return "per-slot";
    default:
      return UnknownName(v);
  }
}

inline std::string TimingName(v1::TimingMode t) {
  if (!v1::TimingMode_IsValid(t)) return UnknownName(t);
  return t == v1::TIMING_MODE_GRAPH ? "graph" : "events";
}

inline std::string CacheName(v1::CacheMode c) {
  if (!v1::CacheMode_IsValid(c)) return UnknownName(c);
  return c == v1::CACHE_MODE_COLD ? "cold" : "warm";
}

// "-" where nothing was judged.
inline std::string VerdictName(v1::Verdict v) {
  switch (v) {
    case v1::VERDICT_FASTER:
      return "faster";
    case v1::VERDICT_SLOWER:
      return "slower";
    case v1::VERDICT_SAME:
      return "same";
    case v1::VERDICT_UNSURE:
      return "unsure";
    case v1::VERDICT_TOO_FEW_REPS:
      return "too few reps";
    case v1::VERDICT_UNSPECIFIED:
      return "-";
    default:
      return UnknownName(v);
  }
}

}  // namespace gpuprobe
