// An example of an operator's command probe (README: registering a command probe): a small
// CUDA program that times device-to-device copies of a few sizes with events and prints the
// seed probe's kind of table on stdout: `#` comment lines, a header row, one row per size.
// gpuprobed runs it with CUDA_VISIBLE_DEVICES set to the job's device.
//
//   COPY_REPS=20 copy_bandwidth_probe     # size_bytes  copy_us  tbps
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

bool Check(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "%s failed: %s\n", call, cudaGetErrorString(error));
  return false;
}

}  // namespace

int main() {
  const char* reps_text = std::getenv("COPY_REPS");
  const int reps = reps_text != nullptr ? std::max(2, std::atoi(reps_text)) : 20;
  cudaDeviceProp prop{};
  if (!Check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties")) return 1;
  std::printf("# copy_bandwidth_probe: cudaMemcpyAsync device to device on %s, %d reps, median\n",
              prop.name, reps);
  std::printf("size_bytes\tcopy_us\ttbps\n");
  cudaEvent_t start, stop;
  if (!Check(cudaEventCreate(&start), "cudaEventCreate") ||
      !Check(cudaEventCreate(&stop), "cudaEventCreate")) {
    return 1;
  }
  for (size_t bytes = size_t{1} << 20; bytes <= size_t{1} << 30; bytes <<= 2) {
    void* from = nullptr;
    void* to = nullptr;
    if (!Check(cudaMalloc(&from, bytes), "cudaMalloc") ||
        !Check(cudaMalloc(&to, bytes), "cudaMalloc") ||
        !Check(cudaMemset(from, 0x5A, bytes), "cudaMemset")) {
      return 1;
    }
    std::vector<float> us;
    for (int r = 0; r < reps; ++r) {
      float ms = 0;
      if (!Check(cudaEventRecord(start), "cudaEventRecord") ||
          !Check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync") ||
          !Check(cudaEventRecord(stop), "cudaEventRecord") ||
          !Check(cudaEventSynchronize(stop), "cudaEventSynchronize") ||
          !Check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime")) {
        return 1;
      }
      if (r > 0) us.push_back(ms * 1e3f);  // rep 0: a warm-up
    }
    std::sort(us.begin(), us.end());
    const double median = us[us.size() / 2];
    // A copy reads and writes every byte.
    std::printf("%zu\t%.3f\t%.3f\n", bytes, median, 2.0 * bytes / median / 1e6);
    cudaFree(from);
    cudaFree(to);
  }
  return 0;
}
