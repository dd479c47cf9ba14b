// Lever table row 61b: how many clusters of 2, 3 and 4 blocks the card holds at once, for blocks
// as large as the sel kernels' (640 threads, 227 KiB of dynamic shared memory: one per SM).
// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -o cluster_capacity cluster_capacity.cu
#include <cstdio>
#include <cuda_runtime.h>

__global__ void Block() {
  extern __shared__ int smem[];
  smem[threadIdx.x] = threadIdx.x;
}

int main() {
  constexpr int kSmem = 227 * 1024;
  if (cudaFuncSetAttribute(Block, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem) !=
      cudaSuccess) {
    std::fprintf(stderr, "cudaFuncSetAttribute failed\n");
    return 1;
  }
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  std::printf("sms\t%d\n", sms);
  for (int size = 1; size <= 8; ++size) {
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim = {static_cast<unsigned>(size), 1, 1};
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(sms / size * size);
    config.blockDim = dim3(640);
    config.dynamicSmemBytes = kSmem;
    config.attrs = &attribute;
    config.numAttrs = 1;
    int clusters = 0;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, Block, &config);
    std::printf("cluster_size\t%d\tmax_active_clusters\t%d\tblocks\t%d\t%s\n", size, clusters,
                clusters * size, cudaGetErrorString(e));
  }
  return 0;
}
