// cp.async (sm_80+): copies from global to shared memory that bypass registers, grouped by
// commit and waited for by group count.
//
//   arch::CopyAsync16(smem_dst, global_src, /*valid=*/true);
//   arch::CommitCopies();
//   arch::WaitCopies<0>();  // every group of this thread has landed
#pragma once

#include <cstdint>

namespace gpuprobe::arch {

// The 32-bit shared-memory address of a generic pointer into this block's shared memory.
__device__ __forceinline__ uint32_t SharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// cp.async: copies to shared memory that bypass registers; a wait_group covers all but the
// newest N commit groups of the thread.
// The copies take the destination as a generic pointer into shared memory or as its 32-bit
// shared address.
__device__ __forceinline__ void CopyAsync16(uint32_t to, const void* global_from, bool valid) {
  // src-size 0 fills the 16 bytes with zeros and reads nothing.
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(global_from),
               "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void CopyAsync16(void* smem_to, const void* global_from, bool valid) {
  CopyAsync16(SharedAddress(smem_to), global_from, valid);
}

__device__ __forceinline__ void CommitCopies() { asm volatile("cp.async.commit_group;\n"); }

template <int kPending>
__device__ __forceinline__ void WaitCopies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

__device__ __forceinline__ void CopyAsync8(uint32_t to, const void* global_from, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(to), "l"(global_from),
               "r"(valid ? 8 : 0));
}

__device__ __forceinline__ void CopyAsync8(void* smem_to, const void* global_from, bool valid) {
  CopyAsync8(SharedAddress(smem_to), global_from, valid);
}

__device__ __forceinline__ void CopyAsync4(uint32_t to, const void* global_from, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(to), "l"(global_from),
               "r"(valid ? 4 : 0));
}

}  // namespace gpuprobe::arch
