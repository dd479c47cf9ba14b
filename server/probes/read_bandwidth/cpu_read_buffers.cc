// The read on the cpu: a loop summing the buffer's words.
#include <memory>
#include <vector>

#include "kernels/read_buffer.h"
#include "server/probes/read_bandwidth/read_buffers.h"

namespace gpuprobe {
namespace {

class CpuReads final : public ReadBuffers {
 public:
  DeviceLaunch& Read(int index) override { return *buffers_[index]; }
  absl::StatusOr<uint32_t> Checksum(int index) override { return buffers_[index]->Sum(); }

 private:
  struct Buffer final : DeviceLaunch {
    std::vector<uint32_t> words;
    volatile uint32_t sink = 0;  // the read's side effect, so that it is never dropped

    uint32_t Sum() {
      uint32_t sum = 0;
      for (uint32_t w : words) sum += w;
      sink = sum;
      return sum;
    }
    absl::Status Enqueue(DeviceStream) override {
      Sum();
      return absl::OkStatus();
    }
  };

  absl::StatusOr<int> AllocateChecked(int64_t bytes, uint64_t seed) override {
    auto buffer = std::make_unique<Buffer>();
    buffer->words.resize(bytes / 4);
    for (size_t i = 0; i < buffer->words.size(); ++i) buffer->words[i] = ReadBufferWord(seed, i);
    buffers_.push_back(std::move(buffer));
    return static_cast<int>(buffers_.size() - 1);
  }

  std::vector<std::unique_ptr<Buffer>> buffers_;
};

}  // namespace

std::unique_ptr<ReadBuffers> CpuReadBuffers() { return std::make_unique<CpuReads>(); }

}  // namespace gpuprobe
