// Owning handle of one cudaMalloc allocation (plain device memory, never managed memory).
//
//   ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Allocate(bytes));
//   RETURN_IF_ERROR(buffer.CopyFrom(host.data(), bytes));
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda_status.h"

namespace gpuprobe {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static absl::StatusOr<DeviceBuffer> Allocate(int64_t bytes) {
    DeviceBuffer b;
    CUDA_RETURN_IF_ERROR(cudaMalloc(&b.ptr_, static_cast<size_t>(bytes)));
    b.bytes_ = bytes;
    return b;
  }
  template <typename T>
  static absl::StatusOr<DeviceBuffer> FromHost(const std::vector<T>& host) {
    absl::StatusOr<DeviceBuffer> b = Allocate(static_cast<int64_t>(host.size() * sizeof(T)));
    if (!b.ok()) return b.status();
    CUDA_RETURN_IF_ERROR(
        cudaMemcpy(b->ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    return b;
  }

  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }

  template <typename T = void>
  T* get() const {
    return static_cast<T*>(ptr_);
  }
  int64_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  int64_t bytes_ = 0;
};

}  // namespace gpuprobe
