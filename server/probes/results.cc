#include "server/probes/results.h"

#include "server/measure/comparison.h"
#include "server/measure/statistics.h"

namespace gpuprobe {

v1::MetricStats MetricOf(const std::string& name, const std::string& unit,
                         const std::vector<double>& samples) {
  const SampleStats stats = Summarize(samples);
  const Interval interval = MedianInterval(samples, ComparisonOptions{});
  v1::MetricStats m;
  m.set_name(name);
  m.set_unit(unit);
  m.set_median(stats.median);
  m.set_min(stats.min);
  m.set_max(stats.max);
  m.set_spread(stats.spread);
  m.set_low(interval.low);
  m.set_high(interval.high);
  m.set_kept(static_cast<uint32_t>(samples.size()));
  m.mutable_samples()->Add(samples.begin(), samples.end());
  return m;
}

v1::ProbeParam Param(const std::string& name, const std::string& type,
                     const std::string& default_value, const std::string& limits,
                     const std::string& description) {
  v1::ProbeParam p;
  p.set_name(name);
  p.set_type(type);
  p.set_default_value(default_value);
  p.set_limits(limits);
  p.set_description(description);
  return p;
}

v1::ProbeQuantity Quantity(const std::string& name, const std::string& unit,
                           const std::string& description) {
  v1::ProbeQuantity q;
  q.set_name(name);
  q.set_unit(unit);
  q.set_description(description);
  return q;
}

}  // namespace gpuprobe
