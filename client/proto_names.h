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

}  // namespace gpuprobe
