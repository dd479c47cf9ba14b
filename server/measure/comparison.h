// Noise-aware comparison of two measurements of one arm: the ratio of a summed median (one
// metric's, or moe-union's section: gate+up + down) between candidate and base (above 1 is
// slower) with a percentile-bootstrap interval over both arms' kept reps, and a verdict against
// a threshold, in the manner of nvbench_compare.
//
//   RatioEstimate r = CompareSections(base_samples, candidate_samples, ComparisonOptions{});
//   RatioEstimate m = CompareSums({base_read_us}, {candidate_read_us}, ComparisonOptions{});
//   if (r.verdict == Verdict::kSlower) ...
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "server/measure/statistics.h"

namespace gpuprobe {

struct ComparisonOptions {
  double threshold = 0.02;   // |ratio - 1| within this is "same"
  double confidence = 0.95;  // of the interval
  int resamples = 2000;
  uint64_t seed = 1;       // the bootstrap's: the same inputs give the same interval
  int min_kept_reps = 10;  // fewer on either side: "too few reps"
  int min_history = 3;     // fewer baseline jobs: "unsure", job-to-job noise unknown
  int min_blocks = 3;      // fewer blocks in either job: the reps' bootstrap instead
};

enum class Verdict { kFaster, kSlower, kSame, kUnsure, kTooFewReps };

std::string_view VerdictName(Verdict verdict);  // faster, slower, same, unsure, too few reps

struct Interval {
  double low = 0.0;
  double high = 0.0;
};

// The median's percentile-bootstrap interval.
Interval MedianInterval(const std::vector<double>& samples, const ComparisonOptions& options);

struct RatioEstimate {
  double ratio = 0.0;  // candidate section median / base section median
  double low = 0.0;    // the interval's bounds
  double high = 0.0;
  Verdict verdict = Verdict::kUnsure;
};

// Each side is a sum of medians, one per component (its samples): sum(median(base[i])) against
// sum(median(candidate[i])). The interval resamples every component of each side with
// replacement. Verdict: slower when the whole interval is above 1 + threshold, faster when below
// 1 - threshold, same when inside [1 - threshold, 1 + threshold], unsure when it straddles a
// threshold, too few reps under min_kept_reps samples in any component.
RatioEstimate CompareSums(const std::vector<std::vector<double>>& base,
                          const std::vector<std::vector<double>>& candidate,
                          const ComparisonOptions& options);

// The section of a set of samples is median(gate+up) + median(down), as in a row.
RatioEstimate CompareSections(const ArmSamples& base, const ArmSamples& candidate,
                              const ComparisonOptions& options);

// A candidate job's value (an arm's section, or sum of medians) against the same value of
// several baseline jobs: the ratio to the baseline's geometric mean, with an interval that
// holds the noise between jobs. On the log scale the baseline jobs estimate the job-to-job
// spread s (their within-job noise included); the candidate is one more job of that spread,
// so the interval is Student's t prediction interval, ratio x exp(+-t(n-1) s sqrt(1 + 1/n)).
// It assumes the candidate was sampled as the baseline jobs were (same reps, same mode) and
// that log values spread normally between jobs. Fewer than min_history baseline jobs: unsure,
// with no interval (low = high = 0).
RatioEstimate CompareWithHistory(const std::vector<double>& base_jobs, double candidate,
                                 const ComparisonOptions& options);

// Two jobs' block values (an arm's section in each block, each block on banks placed anew): the
// ratio of their geometric means, with Welch's t interval on the log scale, ratio x exp(+-t(df)
// sqrt(s_b^2 / n_b + s_c^2 / n_c)), df by Welch-Satterthwaite rounded down. So the interval holds
// the noise between placements and whatever else varies between blocks. It assumes log block
// values spread normally. Call with at least min_blocks values on each side.
RatioEstimate CompareBlocks(const std::vector<double>& base, const std::vector<double>& candidate,
                            const ComparisonOptions& options);

// The q-quantile of Student's t distribution with `df` degrees of freedom, q in (0, 1).
double StudentTQuantile(double q, int df);

}  // namespace gpuprobe
