#include "server/measure/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuprobe {

double MedianInPlace(std::vector<double>& samples) {
  const size_t n = samples.size();
  std::nth_element(samples.begin(), samples.begin() + n / 2, samples.end());
  const double upper = samples[n / 2];
  if (n % 2 == 1) return upper;
  return 0.5 * (upper + *std::max_element(samples.begin(), samples.begin() + n / 2));
}

namespace {

// The largest k for which the order statistics k and n - 1 - k (0-based) cover the median
// with probability at least 95%: 1 - 2 P(B <= k) >= 0.95 for B ~ Binomial(n, 1/2), summed in
// log space so that 2^-n does not underflow the terms that matter. -1 when no k qualifies.
int MedianIntervalRank(size_t n) {
  double log_pmf = -static_cast<double>(n) * std::log(2.0);  // P(B = 0)
  double cumulative = 0.0;
  int rank = -1;
  for (size_t i = 0; i < n / 2; ++i) {
    cumulative += std::exp(log_pmf);
    if (2.0 * cumulative > 0.05) break;
    rank = static_cast<int>(i);
    log_pmf += std::log(static_cast<double>(n - i) / static_cast<double>(i + 1));
  }
  return rank;
}

}  // namespace

double RelativeMedianHalfWidth(std::vector<double>& samples) {
  constexpr double kInfinite = std::numeric_limits<double>::infinity();
  const size_t n = samples.size();
  const int rank = MedianIntervalRank(n);
  if (rank < 0) return kInfinite;
  const size_t k = static_cast<size_t>(rank);
  std::nth_element(samples.begin(), samples.begin() + k, samples.end());
  const double low = samples[k];
  std::nth_element(samples.begin() + k, samples.begin() + (n - 1 - k), samples.end());
  const double high = samples[n - 1 - k];
  const double median = MedianInPlace(samples);
  return median > 0.0 ? (high - low) / 2.0 / median : kInfinite;
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
