#include "server/metrics/metrics_registry.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;

const MetricFamily kRequests = {"test_requests_total", "Requests.", {}};
const MetricFamily kLatency = {"test_latency_seconds", "Latency.", {0.1, 1}};

TEST(MetricsRegistryTest, CountersSumPerSeriesAndEscapeTheirLabelValues) {
  MetricsRegistry registry({&kRequests});
  EXPECT_EQ(registry.Render(),
            "# HELP test_requests_total Requests.\n# TYPE test_requests_total counter\n");
  registry.Add(kRequests, {{"route", "/a"}, {"code", "200"}});
  registry.Add(kRequests, {{"route", "/a"}, {"code", "200"}}, 2);
  registry.Add(kRequests, {{"route", "say \"x\"\\\n"}, {"code", "404"}});
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("test_requests_total{route=\"/a\",code=\"200\"} 3\n"));
  EXPECT_THAT(text,
              HasSubstr("test_requests_total{route=\"say \\\"x\\\"\\\\\\n\",code=\"404\"} 1\n"));
}

TEST(MetricsRegistryTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricsRegistry registry({&kLatency});
  for (const double v : {0.05, 0.1, 0.5, 7.0}) registry.Observe(kLatency, {{"m", "x"}}, v);
  EXPECT_EQ(registry.Render(),
            "# HELP test_latency_seconds Latency.\n# TYPE test_latency_seconds histogram\n"
            "test_latency_seconds_bucket{m=\"x\",le=\"0.1\"} 2\n"
            "test_latency_seconds_bucket{m=\"x\",le=\"1\"} 3\n"
            "test_latency_seconds_bucket{m=\"x\",le=\"+Inf\"} 4\n"
            "test_latency_seconds_sum{m=\"x\"} 7.65\n"
            "test_latency_seconds_count{m=\"x\"} 4\n");
}

TEST(ProcessMetricsTest, ReportsThisProcesssMemoryCpuFilesAndStart) {
  const std::string text = ProcessMetrics();
  for (const char* name : {"process_cpu_seconds_total ", "process_resident_memory_bytes ",
                           "process_open_fds ", "process_start_time_seconds "}) {
    EXPECT_THAT(text, HasSubstr(std::string("\n") + name)) << name;
  }
}

}  // namespace
}  // namespace gpuprobe
