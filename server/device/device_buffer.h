// Owning handle of one cudaMalloc allocation (plain device memory, never managed memory), whose
// data may start `offset` bytes into it: a placement of the same bytes at other addresses.
//
//   ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::FromHost(host));
//   ASSIGN_OR_RETURN(DeviceBuffer moved, DeviceBuffer::CopyOf(buffer, 4096, stream));
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
  // `bytes` of data, `offset` bytes into a fresh allocation of bytes + offset.
  static absl::StatusOr<DeviceBuffer> Allocate(int64_t bytes, int64_t offset = 0) {
    DeviceBuffer b;
    CUDA_RETURN_IF_ERROR(cudaMalloc(&b.base_, static_cast<size_t>(bytes + offset)));
    b.ptr_ = static_cast<char*>(b.base_) + offset;
    b.bytes_ = bytes;
    return b;
  }
  // A copy of `from`'s data in fresh memory, `offset` bytes into it (`from` is still allocated
  // while the copy is, so the copy's memory is other memory).
  static absl::StatusOr<DeviceBuffer> CopyOf(const DeviceBuffer& from, int64_t offset,
                                             cudaStream_t stream) {
    absl::StatusOr<DeviceBuffer> b = Allocate(from.bytes(), offset);
    if (!b.ok()) return b.status();
    CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(b->ptr_, from.ptr_, static_cast<size_t>(from.bytes()),
                                         cudaMemcpyDeviceToDevice, stream));
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
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
      : base_(std::exchange(o.base_, nullptr)),
        ptr_(std::exchange(o.ptr_, nullptr)),
        bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(base_, o.base_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~DeviceBuffer() {
    if (base_ != nullptr) cudaFree(base_);
  }

  template <typename T = void>
  T* get() const {
    return static_cast<T*>(ptr_);
  }
  int64_t bytes() const { return bytes_; }

 private:
  void* base_ = nullptr;  // what cudaMalloc returned
  void* ptr_ = nullptr;   // the data
  int64_t bytes_ = 0;
};

}  // namespace gpuprobe
