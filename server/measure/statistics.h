// Order statistics of an arm's timing samples.
//
//   SampleStats s = Summarize({3.0, 1.0, 2.0});  // median 2, min 1, max 3, spread 1.0
#pragma once

#include <vector>

namespace gpuprobe {

// Samples of an arm's kept reps (rep 0 excluded), microseconds.
struct ArmSamples {
  std::vector<double> gu_us;
  std::vector<double> down_us;
};

struct SampleStats {
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  double spread = 0.0;  // (max - min) / median; 0 when the median is 0
};

// Median of an even count is the mean of the two middle samples. Requires a non-empty input.
SampleStats Summarize(std::vector<double> samples);

// The same median, in linear time, reordering `samples` (the bootstrap's inner loop).
double MedianInPlace(std::vector<double>& samples);

// Half the width of the median's distribution-free 95% interval, as a fraction of the median:
// the order statistics k and n - 1 - k, with k the largest for which the binomial bound gives
// them at least 95% coverage of the true median whatever the samples' distribution. Reorders
// `samples`. Infinite for fewer than 6 samples, where no such pair exists, or a median of 0.
double RelativeMedianHalfWidth(std::vector<double>& samples);

}  // namespace gpuprobe
