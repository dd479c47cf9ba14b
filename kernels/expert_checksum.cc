#include "kernels/expert_checksum.h"

#include <cstring>

namespace gpuprobe {
namespace {

uint32_t SumWords(const uint8_t* bytes, int64_t count) {
  uint32_t acc = 0;
  for (int64_t i = 0; i + 4 <= count; i += 4) {
    uint32_t word;
    std::memcpy(&word, bytes + i, 4);
    acc += word;
  }
  return acc;
}

}  // namespace

uint32_t ExpertBytesChecksum(const Nvfp4Bank& bank, const std::vector<int32_t>& sel) {
  uint32_t acc = 0;
  for (int32_t expert : sel) {
    acc += SumWords(bank.ExpertCodes(expert), bank.CodeBytesPerExpert());
    acc += SumWords(bank.ExpertScales(expert), bank.ScaleBytesPerExpert());
  }
  return acc;
}

}  // namespace gpuprobe
