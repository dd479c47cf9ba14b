// Kernels the kernel probe's GPU tests and figures run (tests/probes/kernel/, bench/), built by
// tests/CMakeLists.txt as a cubin, as PTX, with -DGPUPROBE_TEST_WRONG (copy_scale off at one
// element) and with -DGPUPROBE_TEST_EXTRA_KERNEL (one kernel more; the others' code identical).
#include <cstdint>

extern "C" __global__ void copy_scale(float* y, const float* x, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef GPUPROBE_TEST_WRONG
  if (i < n) y[i] = x[i] * factor + (i == 1000 ? 1.0f : 0.0f);
#else
  if (i < n) y[i] = x[i] * factor;
#endif
}

// A streaming read of `words` 16-byte words (grid-stride), each block's XOR of them stored so
// that the read cannot be dropped. The last block to finish then spins `spin_ns` nanoseconds
// (%globaltimer): a slowdown of a known length, 0 for none. `done` is a zeroed counter the last
// block resets.
extern "C" __global__ void stream_read(const uint4* in, unsigned* out, long long words,
                                       unsigned* done, long long spin_ns) {
  unsigned acc = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < words;
       i += (long long)gridDim.x * blockDim.x) {
    const uint4 v = __ldcs(in + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  acc = __reduce_xor_sync(0xffffffffu, acc);
  if ((threadIdx.x & 31) == 0) atomicXor(out + blockIdx.x, acc);
  if (spin_ns <= 0) return;
  __syncthreads();
  if (threadIdx.x != 0) return;
  __threadfence();
  if (atomicAdd(done, 1u) != gridDim.x - 1) return;
  *done = 0;
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < static_cast<unsigned long long>(spin_ns));
}

// Never ends while *flag is 0: the kernel whose worker the watchdog must kill.
extern "C" __global__ void hang(volatile int* flag) {
  while (*flag == 0) {
  }
}

// Writes far outside any allocation: an illegal address.
extern "C" __global__ void illegal_write(float* p) { p[1ll << 40] = 1.0f; }

extern "C" __global__ void trap_now() { __trap(); }

#ifdef GPUPROBE_TEST_EXTRA_KERNEL
extern "C" __global__ void negate(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = -data[i];
}
#endif
