#include "server/metrics/metrics_registry.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/shortest_double.h"

namespace gpuprobe {
namespace {

const std::vector<double> kJobSecondsBuckets = {0.1, 0.5, 1, 5, 10, 30, 60, 300, 600, 1800, 3600};
const std::vector<double> kRequestSecondsBuckets = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5,
                                                    1,     5,     10,   60,   600};

std::string LabelText(const MetricLabels& labels, const std::string& le = "") {
  std::vector<std::string> parts;
  for (const auto& [name, value] : labels)
    parts.push_back(absl::StrCat(name, "=\"", PrometheusLabelValue(value), "\""));
  if (!le.empty()) parts.push_back(absl::StrCat("le=\"", le, "\""));
  return parts.empty() ? "" : absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

std::string Number(double v) { return ShortestDouble(v); }

}  // namespace

std::string PrometheusLabelValue(const std::string& value) {
  return absl::StrReplaceAll(value, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

const MetricFamily kJobsFinished = {
    "gpuprobe_jobs_finished_total",
    "Jobs this daemon ended since it started, by probe and end state (succeeded, failed, "
    "cancelled); counted once the end is stored.",
    {}};
const MetricFamily kJobDuration = {"gpuprobe_job_duration_seconds",
                                   "Seconds from a job's start on its device to its end, by probe.",
                                   kJobSecondsBuckets};
const MetricFamily kJobQueueWait = {
    "gpuprobe_job_queue_wait_seconds",
    "Seconds from a job's submission to its start on a device of this daemon, by probe.",
    kJobSecondsBuckets};
const MetricFamily kGrpcRequests = {"gpuprobe_grpc_requests_total",
                                    "gRPC calls answered, by full method name and status code.",
                                    {}};
const MetricFamily kGrpcRequestDuration = {
    "gpuprobe_grpc_request_duration_seconds",
    "Seconds from a gRPC call's arrival to its status, by method (a stream's whole life).",
    kRequestSecondsBuckets};
const MetricFamily kHttpRequests = {
    "gpuprobe_http_requests_total", "HTTP requests answered, by route and status code.", {}};
const MetricFamily kHttpRequestDuration = {
    "gpuprobe_http_request_duration_seconds",
    "Seconds from an HTTP request's arrival at a worker to its response, by route.",
    kRequestSecondsBuckets};

MetricsRegistry::MetricsRegistry(std::vector<const MetricFamily*> families)
    : families_(std::move(families)) {}

void MetricsRegistry::Add(const MetricFamily& counter, const MetricLabels& labels, double value) {
  absl::MutexLock lock(&mu_);
  series_[counter.name][labels].value += value;
}

void MetricsRegistry::Observe(const MetricFamily& histogram, const MetricLabels& labels,
                              double value) {
  absl::MutexLock lock(&mu_);
  Series& s = series_[histogram.name][labels];
  s.in_bucket.resize(histogram.buckets.size());
  for (size_t i = 0; i < histogram.buckets.size(); ++i) {
    if (value <= histogram.buckets[i]) ++s.in_bucket[i];
  }
  s.value += value;
  ++s.count;
}

std::string MetricsRegistry::Render() const {
  absl::MutexLock lock(&mu_);
  std::string out;
  for (const MetricFamily* f : families_) {
    const bool histogram = !f->buckets.empty();
    absl::StrAppend(&out, "# HELP ", f->name, " ", f->help, "\n# TYPE ", f->name, " ",
                    histogram ? "histogram" : "counter", "\n");
    auto family = series_.find(f->name);
    if (family == series_.end()) continue;
    for (const auto& [labels, s] : family->second) {
      if (!histogram) {
        absl::StrAppend(&out, f->name, LabelText(labels), " ", Number(s.value), "\n");
        continue;
      }
      for (size_t i = 0; i < f->buckets.size(); ++i) {
        absl::StrAppend(&out, f->name, "_bucket", LabelText(labels, Number(f->buckets[i])), " ",
                        s.in_bucket[i], "\n");
      }
      absl::StrAppend(&out, f->name, "_bucket", LabelText(labels, "+Inf"), " ", s.count, "\n",
                      f->name, "_sum", LabelText(labels), " ", Number(s.value), "\n", f->name,
                      "_count", LabelText(labels), " ", s.count, "\n");
    }
  }
  return out;
}

MetricsRegistry& DaemonMetrics() {
  static MetricsRegistry* registry =
      new MetricsRegistry({&kJobsFinished, &kJobDuration, &kJobQueueWait, &kGrpcRequests,
                           &kGrpcRequestDuration, &kHttpRequests, &kHttpRequestDuration});
  return *registry;
}

std::string ProcessMetrics() {
  // /proc/self/stat: fields after the command's closing parenthesis; utime and stime are the
  // 12th and 13th of those, starttime the 20th (clock ticks), rss the 22nd (pages).
  std::ifstream stat_file("/proc/self/stat");
  const std::string stat((std::istreambuf_iterator<char>(stat_file)), {});
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return "";
  const std::vector<std::string> f = absl::StrSplit(stat.substr(close + 2), ' ', absl::SkipEmpty());
  if (f.size() < 22) return "";
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double cpu = (std::stod(f[11]) + std::stod(f[12])) / ticks;
  const double rss = std::stod(f[21]) * static_cast<double>(sysconf(_SC_PAGESIZE));
  // The start: boot time (btime in /proc/stat) plus starttime.
  double boot = 0;
  std::ifstream proc_stat("/proc/stat");
  for (std::string line; std::getline(proc_stat, line);) {
    if (line.rfind("btime ", 0) == 0) boot = std::stod(line.substr(6));
  }
  const double start = boot + std::stod(f[19]) / ticks;
  size_t fds = 0;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    ++fds;
  }
  return absl::StrCat(
      "# HELP process_cpu_seconds_total User and system CPU time spent, seconds.\n"
      "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total ",
      Number(cpu),
      "\n# HELP process_resident_memory_bytes Resident memory size, bytes.\n"
      "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes ",
      Number(rss),
      "\n# HELP process_open_fds Open file descriptors.\n"
      "# TYPE process_open_fds gauge\nprocess_open_fds ",
      fds,
      "\n# HELP process_start_time_seconds Start time of the process since the Unix epoch, "
      "seconds.\n# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds ",
      Number(start), "\n");
}

}  // namespace gpuprobe
