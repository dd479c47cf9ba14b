// GPUPROBE_HD marks a function that both nvcc's device code and plain C++ host code (the launch
// planner, its unit tests) compile: `__host__ __device__` under nvcc, nothing elsewhere.
//
//   GPUPROBE_HD constexpr int StageBytes(int chunks_per_thread, int octets);
#pragma once

#if defined(__CUDACC__)
#define GPUPROBE_HD __host__ __device__
#else
#define GPUPROBE_HD
#endif
