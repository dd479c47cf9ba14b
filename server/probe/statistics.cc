#include "server/probe/statistics.h"

#include <algorithm>

namespace gpuprobe {

SampleStats Summarize(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  SampleStats s;
  s.median = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.min = samples.front();
  s.max = samples.back();
  s.spread = s.median > 0.0 ? (s.max - s.min) / s.median : 0.0;
  return s;
}

}  // namespace gpuprobe
