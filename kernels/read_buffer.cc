#include "kernels/read_buffer.h"

namespace gpuprobe {

uint32_t ReadBufferChecksum(int64_t count, uint64_t seed) {
  uint32_t sum = 0;
  for (int64_t i = 0; i < count; ++i) sum += ReadBufferWord(seed, static_cast<uint64_t>(i));
  return sum;
}

}  // namespace gpuprobe
