// The read on cuda: the floor kernel over one region, the whole buffer.
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "common/status_macros.h"
#include "kernels/cuda_status.h"
#include "kernels/read_buffer_fill.h"
#include "kernels/read_floor.h"
#include "server/device/device_buffer.h"
#include "server/probes/read_bandwidth/read_buffers.h"

namespace gpuprobe {
namespace {

class CudaReads final : public ReadBuffers {
 public:
  explicit CudaReads(Backend& device) : device_(device) {}

  DeviceLaunch& Read(int index) override { return *buffers_[index]; }
  absl::StatusOr<uint32_t> Checksum(int index) override {
    CUDA_RETURN_IF_ERROR(cudaSetDevice(device_.Ordinal()));  // the caller's thread may be new
    return ReadFloorChecksum(buffers_[index]->args, Stream());
  }

 private:
  struct Buffer final : DeviceLaunch {
    DeviceBuffer words, sel, partials;
    ReadFloorArgs args;

    absl::Status Enqueue(DeviceStream stream) override {
      return LaunchReadFloor(args, static_cast<cudaStream_t>(stream));
    }
  };

  cudaStream_t Stream() const { return static_cast<cudaStream_t>(device_.Stream()); }

  absl::StatusOr<int> AllocateChecked(int64_t bytes, uint64_t seed) override {
    CUDA_RETURN_IF_ERROR(cudaSetDevice(device_.Ordinal()));
    auto buffer = std::make_unique<Buffer>();
    ASSIGN_OR_RETURN(buffer->words, DeviceBuffer::Allocate(bytes));
    RETURN_IF_ERROR(LaunchFillReadBuffer(buffer->words.get<uint32_t>(), bytes / 4, seed, Stream()));
    ASSIGN_OR_RETURN(buffer->sel, DeviceBuffer::FromHost(std::vector<int32_t>{0}));
    const int blocks = kFloorBlocksPerSm * device_.Details().multiprocessors;
    ASSIGN_OR_RETURN(buffer->partials, DeviceBuffer::Allocate(blocks * sizeof(uint32_t)));
    buffer->args.regions[0] = {buffer->words.get<uint8_t>(), 0, bytes};
    buffer->args.sel = buffer->sel.get<int32_t>();
    buffer->args.slots = 1;
    buffer->args.blocks = blocks;
    buffer->args.partials = buffer->partials.get<uint32_t>();
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(Stream()));
    buffers_.push_back(std::move(buffer));
    return static_cast<int>(buffers_.size() - 1);
  }

  Backend& device_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
};

}  // namespace

std::unique_ptr<ReadBuffers> CudaReadBuffers(Backend& device) {
  return std::make_unique<CudaReads>(device);
}

}  // namespace gpuprobe
