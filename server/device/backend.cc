#include "server/device/backend.h"

namespace gpuprobe {

std::string_view VariantName(KernelVariant variant) {
  switch (variant) {
    case KernelVariant::kPerSlot:
      return "per-slot";
    case KernelVariant::kUnion:
      return "union";
    case KernelVariant::kFloor:
      return "floor";
  }
  return "?";
}

std::string_view TimingName(TimingMode timing) {
  return timing == TimingMode::kGraph ? "graph" : "events";
}

std::string_view CacheName(CacheMode cache) { return cache == CacheMode::kCold ? "cold" : "warm"; }

}  // namespace gpuprobe
