// The GPU tests' fixture: device 0's cuda backend, made once per suite; every case of a suite
// reports SKIPPED where no CUDA device is visible (ctest counts it as skipped, label `gpu`).
//
//   class MyGpuTest : public CudaDeviceTest {};
//   TEST_F(MyGpuTest, Reads) { ... *backend_ ... }
#pragma once

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "server/device/cuda_backend.h"

namespace gpuprobe {

class CudaDeviceTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<CudaBackend>> cuda = CudaBackend::Create(0);
    if (cuda.ok())
      backend_ = cuda->release();
    else
      skip_reason_ = new std::string(cuda.status().ToString());
  }
  static void TearDownTestSuite() { delete backend_; }

  void SetUp() override {
    if (backend_ == nullptr) GTEST_SKIP() << "no CUDA device: " << *skip_reason_;
  }

  static inline CudaBackend* backend_ = nullptr;
  static inline std::string* skip_reason_ = nullptr;
};

}  // namespace gpuprobe
