// Test modules for the module checks (tests/common/module_inspection_test.cc): built as a cubin,
// a fatbin (compressed and not) and PTX by tests/CMakeLists.txt. Two kernels: one extern "C",
// one a C++ template (a mangled name); a third in scale_extra.cubin.
extern "C" __global__ void scale(float* out, const float* in, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * factor;
}

template <typename T>
__global__ void add_one(T* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += T(1);
}
template __global__ void add_one<int>(int*, int);

#ifdef GPUPROBE_TEST_EXTRA_KERNEL
// Built into a second cubin only: its bytes differ, its other kernels' machine code does not.
extern "C" __global__ void negate(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = -data[i];
}
#endif
