// The empty launch on the cpu, and the choice of implementation.
#include "server/probes/launch_latency/empty_launch.h"

#include "absl/strings/str_format.h"

namespace gpuprobe {
namespace {

class CpuEmptyLaunch final : public DeviceLaunch {
 public:
  explicit CpuEmptyLaunch(int64_t blocks) : blocks_(blocks) {}
  absl::Status Enqueue(DeviceStream) override {
    for (int64_t block = 0; block < blocks_; ++block) {
      asm volatile("" ::: "memory");  // a block that does nothing, kept
    }
    return absl::OkStatus();
  }

 private:
  const int64_t blocks_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceLaunch>> EmptyLaunchOn(Backend& device, int64_t blocks,
                                                            int threads) {
  if (blocks < 1 || blocks > 0x7fffffff || threads < 1 || threads > 1024) {
    return absl::InvalidArgumentError(
        absl::StrFormat("grid_sizes, block_threads: %d x %d is outside [1, 2147483647] x [1, 1024]",
                        blocks, threads));
  }
  if (device.Name() == "cpu") return std::make_unique<CpuEmptyLaunch>(blocks);
#if GPUPROBE_HAVE_CUDA
  if (device.Name() == "cuda") {
    return CudaEmptyLaunch(static_cast<unsigned>(blocks), static_cast<unsigned>(threads));
  }
#endif
  return absl::UnimplementedError(
      absl::StrFormat("the %s backend has no empty kernel (launch-latency)", device.Name()));
}

}  // namespace gpuprobe
