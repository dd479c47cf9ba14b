#include "server/measure/statistics.h"

#include <algorithm>

namespace gpuprobe {

double MedianInPlace(std::vector<double>& samples) {
  const size_t n = samples.size();
  std::nth_element(samples.begin(), samples.begin() + n / 2, samples.end());
  const double upper = samples[n / 2];
  if (n % 2 == 1) return upper;
  return 0.5 * (upper + *std::max_element(samples.begin(), samples.begin() + n / 2));
}

SampleStats Summarize(std::vector<double> samples) {
  SampleStats s;
  const auto [min, max] = std::minmax_element(samples.begin(), samples.end());
  s.min = *min;
  s.max = *max;
  s.median = MedianInPlace(samples);
  s.spread = s.median > 0.0 ? (s.max - s.min) / s.median : 0.0;
  return s;
}

}  // namespace gpuprobe
