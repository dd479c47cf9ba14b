// The cold-cache flush: memory of twice the device's last-level cache, overwritten with a new
// value before each cold launch (outside its timed region), so that no line of the launch's
// inputs is left in the cache. One per device, kept across jobs with the device.
//
//   ASSIGN_OR_RETURN(std::shared_ptr<ColdCache> cold, ColdCache::Of(device));
//   RETURN_IF_ERROR(cold->Flush());  // enqueued on the device's stream
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "server/device/backend.h"

namespace gpuprobe {

class ColdCache {
 public:
  // The device's flush, allocated on first use.
  static absl::StatusOr<std::shared_ptr<ColdCache>> Of(Backend& device);

  ColdCache(Backend& device, std::unique_ptr<DeviceMemory> memory)
      : device_(device), memory_(std::move(memory)) {}
  // Enqueues the overwrite. The value changes at every call so that no flush is a no-op; a
  // captured flush keeps the value it was captured with.
  absl::Status Flush() { return device_.Overwrite(*memory_, ++value_); }
  int64_t bytes() const { return memory_->bytes(); }

 private:
  Backend& device_;
  const std::unique_ptr<DeviceMemory> memory_;
  uint8_t value_ = 0;
};

}  // namespace gpuprobe
