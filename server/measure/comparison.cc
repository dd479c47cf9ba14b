#include "server/measure/comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/seeded_rng.h"
#include "server/measure/statistics.h"

namespace gpuprobe {
namespace {

// The mean and sample standard deviation of the values' logarithms (sd 0 for one value).
struct LogMoments {
  double n = 0.0, mean = 0.0, sd = 0.0;
};
LogMoments OfLogs(const std::vector<double>& values) {
  LogMoments m{.n = static_cast<double>(values.size())};
  for (double x : values) m.mean += std::log(x) / m.n;
  if (values.size() < 2) return m;
  double squares = 0.0;
  for (double x : values) squares += (std::log(x) - m.mean) * (std::log(x) - m.mean);
  m.sd = std::sqrt(squares / (m.n - 1.0));
  return m;
}

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

// The verdict of an interval against the threshold.
Verdict Judge(double low, double high, double threshold) {
  if (low > 1.0 + threshold) return Verdict::kSlower;
  if (high < 1.0 - threshold) return Verdict::kFaster;
  if (low >= 1.0 - threshold && high <= 1.0 + threshold) return Verdict::kSame;
  return Verdict::kUnsure;
}

// The regularized incomplete beta function I_x(a, b), by its continued fraction (modified
// Lentz), on the side of x where the fraction converges fast.
double IncompleteBeta(double x, double a, double b) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  if (x > (a + 1.0) / (a + b + 2.0)) return 1.0 - IncompleteBeta(1.0 - x, b, a);
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x)) /
                       a;
  constexpr double kTiny = 1e-300;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  d = 1.0 / (std::abs(d) < kTiny ? kTiny : d);
  double f = d;
  for (int m = 1; m <= 300; ++m) {
    for (const double numerator : {m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                                   -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))}) {
      d = 1.0 + numerator * d;
      d = 1.0 / (std::abs(d) < kTiny ? kTiny : d);
      c = 1.0 + numerator / c;
      if (std::abs(c) < kTiny) c = kTiny;
      f *= c * d;
    }
    if (std::abs(c * d - 1.0) < 1e-15) break;
  }
  return front * f;
}

}  // namespace

double StudentTQuantile(double q, int df) {
  if (q == 0.5) return 0.0;
  if (q < 0.5) return -StudentTQuantile(1.0 - q, df);
  const double nu = df;
  // P(T > t) = I_{nu / (nu + t^2)}(nu / 2, 1 / 2) / 2, falling in t: bisect for 1 - q.
  double low = 0.0, high = 1.0;
  const auto upper_tail = [&](double t) {
    return 0.5 * IncompleteBeta(nu / (nu + t * t), nu / 2, 0.5);
  };
  while (upper_tail(high) > 1.0 - q) high *= 2.0;
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double mid = 0.5 * (low + high);
    (upper_tail(mid) > 1.0 - q ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

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
  r.verdict = static_cast<int>(fewest) < o.min_kept_reps ? Verdict::kTooFewReps
                                                         : Judge(r.low, r.high, o.threshold);
  return r;
}

RatioEstimate CompareWithHistory(const std::vector<double>& base_jobs, double candidate,
                                 const ComparisonOptions& o) {
  RatioEstimate r;
  if (base_jobs.empty() || !(candidate > 0.0)) return r;
  const LogMoments history = OfLogs(base_jobs);
  const double n = history.n;
  r.ratio = candidate / std::exp(history.mean);
  if (static_cast<int>(base_jobs.size()) < o.min_history) return r;  // unsure, no interval
  const double half = StudentTQuantile(0.5 + o.confidence / 2.0, static_cast<int>(n) - 1) *
                      history.sd * std::sqrt(1.0 + 1.0 / n);
  r.low = r.ratio * std::exp(-half);
  r.high = r.ratio * std::exp(half);
  r.verdict = Judge(r.low, r.high, o.threshold);
  return r;
}

RatioEstimate CompareBlocks(const std::vector<double>& base, const std::vector<double>& candidate,
                            const ComparisonOptions& o) {
  const LogMoments b = OfLogs(base), c = OfLogs(candidate);
  RatioEstimate r;
  r.ratio = std::exp(c.mean - b.mean);
  // The variance of each side's mean, and Welch-Satterthwaite's degrees of freedom.
  const double vb = b.sd * b.sd / b.n, vc = c.sd * c.sd / c.n;
  const double variance = vb + vc;
  const double df = variance > 0.0
                        ? variance * variance / (vb * vb / (b.n - 1.0) + vc * vc / (c.n - 1.0))
                        : b.n + c.n - 2.0;
  const double half =
      StudentTQuantile(0.5 + o.confidence / 2.0, std::max(1, static_cast<int>(std::floor(df)))) *
      std::sqrt(variance);
  r.low = r.ratio * std::exp(-half);
  r.high = r.ratio * std::exp(half);
  r.verdict = Judge(r.low, r.high, o.threshold);
  return r;
}

RatioEstimate CompareSections(const ArmSamples& base, const ArmSamples& candidate,
                              const ComparisonOptions& o) {
  return CompareSums({base.gu_us, base.down_us}, {candidate.gu_us, candidate.down_us}, o);
}

}  // namespace gpuprobe
