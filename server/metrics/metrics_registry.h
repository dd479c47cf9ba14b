// The daemon's own counters and histograms for Prometheus (job outcomes, job durations and
// queue waits, gRPC and HTTP requests), kept in one process-wide registry as Prometheus
// clients keep theirs, and written in the text exposition format (version 0.0.4). Debian has
// no Prometheus client library for C++; this is the small part of one that gpuprobed needs.
//
//   DaemonMetrics().Add(kJobsFinished, {{"probe", "moe-union"}, {"state", "succeeded"}});
//   DaemonMetrics().Observe(kJobDuration, {{"probe", "moe-union"}}, 12.5);
//   out += DaemonMetrics().Render();
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace gpuprobe {

// A metric family: its name (base units, as Prometheus names them), help and, for a
// histogram, its bucket bounds (ascending; +Inf is implied).
struct MetricFamily {
  const char* name;
  const char* help;
  std::vector<double> buckets;  // empty: a counter
};

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// The families gpuprobed records.
extern const MetricFamily kJobsFinished;         // counter {probe, state}
extern const MetricFamily kJobDuration;          // histogram {probe}, seconds
extern const MetricFamily kJobQueueWait;         // histogram {probe}, seconds
extern const MetricFamily kGrpcRequests;         // counter {method, code}
extern const MetricFamily kGrpcRequestDuration;  // histogram {method}, seconds
extern const MetricFamily kHttpRequests;         // counter {route, code}
extern const MetricFamily kHttpRequestDuration;  // histogram {route}, seconds

class MetricsRegistry {
 public:
  // `families` are rendered in this order, each with its HELP and TYPE even before a sample.
  explicit MetricsRegistry(std::vector<const MetricFamily*> families);

  // A counter's series += `value`.
  void Add(const MetricFamily& counter, const MetricLabels& labels, double value = 1.0);
  // One observation of a histogram's series.
  void Observe(const MetricFamily& histogram, const MetricLabels& labels, double value);
  std::string Render() const;

 private:
  struct Series {
    double value = 0.0;               // a counter's total; a histogram's sum
    uint64_t count = 0;               // a histogram's observations
    std::vector<uint64_t> in_bucket;  // a histogram's observations <= each bound
  };
  const std::vector<const MetricFamily*> families_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::map<MetricLabels, Series>> series_ ABSL_GUARDED_BY(mu_);
};

// A label value as the exposition format writes it: backslash, double quote and newline escaped.
std::string PrometheusLabelValue(const std::string& value);

// The registry of this process, holding the families above.
MetricsRegistry& DaemonMetrics();

// The process's own standard metrics (process_cpu_seconds_total, process_resident_memory_bytes,
// process_open_fds, process_start_time_seconds), read from /proc at each scrape.
std::string ProcessMetrics();

}  // namespace gpuprobe
