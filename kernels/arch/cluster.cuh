// Thread-block clusters (sm_90): the block's rank, cluster barriers, and stores into rank 0's
// shared memory (distributed shared memory) counted on an mbarrier there.
//
//   if (arch::ClusterRank() == 1) arch::SendToRankZero(dst, value, barrier);  // rank 1
//   arch::WaitExchange(barrier);                                              // rank 0
#pragma once

#include <cstdint>

#include "kernels/arch/cp_async.cuh"

namespace gpuprobe::arch {

__device__ __forceinline__ uint32_t ClusterRank() {
  uint32_t rank;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// Every thread of the cluster's blocks arrives (relaxed: orders none of its writes) / waits.
__device__ __forceinline__ void ClusterArrive() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void ClusterWait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// An exchange from rank 1 to rank 0: stores into rank 0's shared memory by st.async, counted in
// bytes on an mbarrier of rank 0's, so that no thread fences its memory or meets a cluster
// barrier (a release arrive compiles to a GPU-scope membar; H200, 2026-12-01: the exchange by
// st.async took 0.6-0.7 us off the union-10 gate+up, 5%).
__device__ __forceinline__ uint32_t RankZeroAddress(const void* p) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, 0;\n" : "=r"(remote) : "r"(SharedAddress(p)));
  return remote;
}
__device__ __forceinline__ void InitExchangeBarrier(uint64_t* barrier) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(SharedAddress(barrier)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void ExpectExchangeBytes(uint64_t* barrier, uint32_t bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(SharedAddress(barrier)),
      "r"(bytes)
      : "memory");
}
__device__ __forceinline__ void WaitExchange(uint64_t* barrier) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(SharedAddress(barrier))
      : "memory");
}
// Stores at `to` (an address of this block's layout) in rank 0's shared memory, counted on rank
// 0's `barrier`.
__device__ __forceinline__ void SendToRankZero(float* to, const float (&v)[4], uint64_t* barrier) {
  const uint32_t at = RankZeroAddress(to), counter = RankZeroAddress(barrier);
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, "
      "[%5];\n" ::"r"(at),
      "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3]), "r"(counter)
      : "memory");
}
__device__ __forceinline__ void SendToRankZero(float* to, float v, uint64_t* barrier) {
  const uint32_t at = RankZeroAddress(to), counter = RankZeroAddress(barrier);
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];\n" ::"r"(at),
      "f"(v), "r"(counter)
      : "memory");
}

}  // namespace gpuprobe::arch
