#include "server/probe/comparison.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/seeded_rng.h"
#include "server/probe/statistics.h"

namespace gpuprobe {
namespace {

// A resample of `samples` with replacement, into `out`.
void Resample(const std::vector<double>& samples, SeededRng& rng, std::vector<double>& out) {
  out.resize(samples.size());
  for (double& x : out) x = samples[rng.Below(static_cast<uint32_t>(samples.size()))];
}

double Section(const ArmSamples& s) {
  return Summarize(s.gu_us).median + Summarize(s.down_us).median;
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

RatioEstimate CompareSections(const ArmSamples& base, const ArmSamples& candidate,
                              const ComparisonOptions& o) {
  RatioEstimate r;
  const size_t fewest = std::min(
      {base.gu_us.size(), base.down_us.size(), candidate.gu_us.size(), candidate.down_us.size()});
  if (fewest == 0) {
    r.verdict = Verdict::kTooFewReps;
    return r;
  }
  r.ratio = Section(candidate) / Section(base);
  SeededRng rng(o.seed);
  std::vector<double> ratios(static_cast<size_t>(o.resamples));
  std::vector<double> scratch;
  for (double& ratio : ratios) {
    double sections[2];
    int side = 0;
    for (const ArmSamples* s : {&base, &candidate}) {
      Resample(s->gu_us, rng, scratch);
      double section = MedianInPlace(scratch);
      Resample(s->down_us, rng, scratch);
      section += MedianInPlace(scratch);
      sections[side++] = section;
    }
    ratio = sections[1] / sections[0];
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

}  // namespace gpuprobe
