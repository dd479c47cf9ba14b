#include "server/measure/cold_cache.h"

#include "common/status_macros.h"

namespace gpuprobe {

absl::StatusOr<std::shared_ptr<ColdCache>> ColdCache::Of(Backend& device) {
  std::shared_ptr<void>& resident = device.Resident("measure.cold_cache");
  if (resident == nullptr) {
    ASSIGN_OR_RETURN(std::unique_ptr<DeviceMemory> memory,
                     device.Allocate(2 * device.LastLevelCacheBytes()));
    resident = std::make_shared<ColdCache>(device, std::move(memory));
  }
  return std::static_pointer_cast<ColdCache>(resident);
}

}  // namespace gpuprobe
