#include "server/web/prometheus_metrics.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace gpuprobe {
namespace {

// Label values escape backslash, double quote and newline.
std::string Escape(const std::string& value) {
  return absl::StrReplaceAll(value, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

void Family(std::string& out, const char* name, const char* type, const char* help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

}  // namespace

std::string PrometheusMetrics(const v1::ServerInfo& info, const JobStore::Totals& totals) {
  std::string out;
  Family(out, "gpuprobe_build_info", "gauge", "gpuprobed's version and backend; always 1.");
  absl::StrAppend(&out, "gpuprobe_build_info{version=\"", Escape(info.version()), "\",backend=\"",
                  Escape(info.backend()), "\"} 1\n");

  Family(out, "gpuprobe_queue_depth", "gauge",
         "Jobs queued or running; device=\"all\" counts every job, a device index counts the "
         "job it runs and the jobs pinned to it.");
  absl::StrAppend(&out, "gpuprobe_queue_depth{device=\"all\"} ", info.queue_depth(), "\n");
  for (const v1::DeviceStatus& d : info.devices()) {
    absl::StrAppend(&out, "gpuprobe_queue_depth{device=\"", d.index(), "\"} ",
                    d.pinned_queue_depth() + (d.running_job_id().empty() ? 0 : 1), "\n");
  }

  Family(out, "gpuprobe_jobs", "gauge", "Stored jobs by state.");
  for (v1::JobState state : {v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED,
                             v1::JOB_STATE_FAILED, v1::JOB_STATE_CANCELLED}) {
    auto it = totals.jobs_by_state.find(state);
    const std::string name =
        absl::AsciiStrToLower(v1::JobState_Name(state).substr(std::string("JOB_STATE_").size()));
    absl::StrAppend(&out, "gpuprobe_jobs{state=\"", name, "\"} ",
                    it == totals.jobs_by_state.end() ? 0 : it->second, "\n");
  }

  Family(out, "gpuprobe_rows_total", "counter",
         "Result rows (and exactness checks) stored, over all jobs.");
  absl::StrAppend(&out, "gpuprobe_rows_total ", totals.results, "\n");

  Family(out, "gpuprobe_device_busy_seconds_total", "counter",
         "Seconds each device spent running jobs since gpuprobed started.");
  for (const v1::DeviceStatus& d : info.devices()) {
    absl::StrAppend(&out, "gpuprobe_device_busy_seconds_total{device=\"", d.index(), "\"} ",
                    absl::StrFormat("%.6f", d.busy_seconds()), "\n");
  }

  Family(out, "gpuprobe_worker_restarts_total", "counter",
         "Device worker processes replaced after a crash or a device error.");
  for (const v1::DeviceStatus& d : info.devices()) {
    absl::StrAppend(&out, "gpuprobe_worker_restarts_total{device=\"", d.index(), "\"} ",
                    d.worker_restarts(), "\n");
  }

  Family(out, "gpuprobe_calibrated_read_tbps", "gauge",
         "Streaming read bandwidth measured when the device's worker started, TB/s (0: none).");
  for (const v1::DeviceStatus& d : info.devices()) {
    absl::StrAppend(&out, "gpuprobe_calibrated_read_tbps{device=\"", d.index(), "\",name=\"",
                    Escape(d.details().name()), "\"} ",
                    absl::StrFormat("%.6f", d.details().calibrated_read_tbps()), "\n");
  }

  Family(out, "gpuprobe_fleet_device_up", "gauge",
         "Each device of every daemon sharing the job store: 1 serving, 0 lost (its daemon "
         "stopped heartbeating).");
  for (const v1::FleetDevice& f : info.fleet()) {
    absl::StrAppend(&out, "gpuprobe_fleet_device_up{host=\"", Escape(f.host()), "\",daemon=\"",
                    Escape(f.daemon_id()), "\",device=\"", f.index(), "\",model=\"",
                    Escape(f.model()), "\"} ", f.state() == "serving" ? 1 : 0, "\n");
  }
  Family(out, "gpuprobe_fleet_device_busy", "gauge",
         "Each device of every daemon sharing the job store: 1 while it runs a job.");
  for (const v1::FleetDevice& f : info.fleet()) {
    absl::StrAppend(&out, "gpuprobe_fleet_device_busy{host=\"", Escape(f.host()), "\",daemon=\"",
                    Escape(f.daemon_id()), "\",device=\"", f.index(), "\"} ",
                    f.running_job_id().empty() ? 0 : 1, "\n");
  }

  // The latest telemetry reading of each device that has one (NVML, after each rep).
  struct Gauge {
    const char* name;
    const char* help;
    double (*value)(const v1::TelemetryReading&);
  };
  static constexpr Gauge kGauges[] = {
      {"gpuprobe_device_sm_clock_mhz", "SM clock at the latest reading, MHz.",
       [](const v1::TelemetryReading& r) { return double(r.sm_mhz()); }},
      {"gpuprobe_device_memory_clock_mhz", "Memory clock at the latest reading, MHz.",
       [](const v1::TelemetryReading& r) { return double(r.memory_mhz()); }},
      {"gpuprobe_device_power_watts", "Board power at the latest reading.",
       [](const v1::TelemetryReading& r) { return r.power_w(); }},
      {"gpuprobe_device_temperature_celsius", "GPU temperature at the latest reading.",
       [](const v1::TelemetryReading& r) { return double(r.temperature_c()); }},
      {"gpuprobe_device_throttled", "1 when the latest reading showed a throttle reason.",
       [](const v1::TelemetryReading& r) { return r.throttle_reasons_size() > 0 ? 1.0 : 0.0; }},
      {"gpuprobe_device_foreign_processes",
       "Compute processes other than gpuprobe's at the latest reading.",
       [](const v1::TelemetryReading& r) { return double(r.foreign_processes_size()); }},
  };
  for (const Gauge& g : kGauges) {
    Family(out, g.name, "gauge", g.help);
    for (const v1::DeviceStatus& d : info.devices()) {
      if (!d.has_telemetry()) continue;
      absl::StrAppend(&out, g.name, "{device=\"", d.index(), "\"} ",
                      absl::StrFormat("%g", g.value(d.telemetry())), "\n");
    }
  }
  return out;
}

}  // namespace gpuprobe
