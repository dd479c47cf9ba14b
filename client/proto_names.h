// The command-line names of the API's enums, as users type them in flags.
#pragma once

#include <string>

#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

inline std::string VariantName(v1::KernelVariant v) {
  switch (v) {
    case v1::KERNEL_VARIANT_UNION:
      return "union";
    case v1::KERNEL_VARIANT_FLOOR:
      return "floor";
    default:
      return "per-slot";
  }
}

inline std::string TimingName(v1::TimingMode t) {
  return t == v1::TIMING_MODE_GRAPH ? "graph" : "events";
}

inline std::string CacheName(v1::CacheMode c) { return c == v1::CACHE_MODE_COLD ? "cold" : "warm"; }

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
    default:
      return "-";
  }
}

}  // namespace gpuprobe
