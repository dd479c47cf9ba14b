#include "server/measure/comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/seeded_rng.h"
#include "server/measure/statistics.h"

namespace gpuprobe {
namespace {

// A resample of `samples` with replacement, into `out`.
void Resample(const std::vector<double>& samples, SeededRng& rng, std::vector<double>& out) {
  out.resize(samples.size());
  for (double& x : out) x = samples[rng.Below(static_cast<uint32_t>(samples.size()))];
}

double SumOfMedians(const std::vector<std::vector<double>>& components) {
  double sum = 0.0;
  for (const std::vector<double>& samples : components) sum += Summarize(samples).median;
  return sum;
}

// The confidence interval's bounds of sorted replicates.
Interval Percentiles(const std::vector<double>& sorted, double confidence) {
  const double tail = (1.0 - confidence) / 2.0;
  const auto at = [&](double q) {
    const size_t i = static_cast<size_t>(std::floor(q * static_cast<double>(sorted.size() - 1)));
    return sorted[std::min(i, sorted.size() - 1)];
  };
  return {at(tail), at(1.0 - tail)};
}

}  // namespace

Interval MedianInterval(const std::vector<double>& samples, const ComparisonOptions& o) {
  if (samples.empty()) return {};
  SeededRng rng(o.seed);
  std::vector<double> medians(static_cast<size_t>(o.resamples)), scratch;
  for (double& m : medians) {
    Resample(samples, rng, scratch);
    m = MedianInPlace(scratch);
  }
  std::sort(medians.begin(), medians.end());
  return Percentiles(medians, o.confidence);
}

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFaster:
      return "faster";
    case Verdict::kSlower:
      return "slower";
    case Verdict::kSame:
      return "same";
    case Verdict::kUnsure:
      return "unsure";
    case Verdict::kTooFewReps:
      return "too few reps";
  }
  return "unsure";
}

RatioEstimate CompareSums(const std::vector<std::vector<double>>& base,
                          const std::vector<std::vector<double>>& candidate,
                          const ComparisonOptions& o) {
  RatioEstimate r;
  size_t fewest = base.empty() || candidate.empty() ? 0 : SIZE_MAX;
  for (const auto* side : {&base, &candidate}) {
    for (const std::vector<double>& samples : *side) fewest = std::min(fewest, samples.size());
  }
  if (fewest == 0) {
    r.verdict = Verdict::kTooFewReps;
    return r;
  }
  r.ratio = SumOfMedians(candidate) / SumOfMedians(base);
  SeededRng rng(o.seed);
  std::vector<double> ratios(static_cast<size_t>(o.resamples));
  std::vector<double> scratch;
  for (double& ratio : ratios) {
    double sums[2];
    int side = 0;
    for (const auto* components : {&base, &candidate}) {
      double sum = 0.0;
      for (const std::vector<double>& samples : *components) {
        Resample(samples, rng, scratch);
        sum += MedianInPlace(scratch);
      }
      sums[side++] = sum;
    }
    ratio = sums[1] / sums[0];
  }
  std::sort(ratios.begin(), ratios.end());
  const Interval interval = Percentiles(ratios, o.confidence);
  r.low = interval.low;
  r.high = interval.high;
  if (static_cast<int>(fewest) < o.min_kept_reps) {
    r.verdict = Verdict::kTooFewReps;
  } else if (r.low > 1.0 + o.threshold) {
    r.verdict = Verdict::kSlower;
  } else if (r.high < 1.0 - o.threshold) {
    r.verdict = Verdict::kFaster;
  } else if (r.low >= 1.0 - o.threshold && r.high <= 1.0 + o.threshold) {
    r.verdict = Verdict::kSame;
  } else {
    r.verdict = Verdict::kUnsure;
  }
  return r;
}

RatioEstimate CompareSections(const ArmSamples& base, const ArmSamples& candidate,
                              const ComparisonOptions& o) {
  return CompareSums({base.gu_us, base.down_us}, {candidate.gu_us, candidate.down_us}, o);
}

}  // namespace gpuprobe
