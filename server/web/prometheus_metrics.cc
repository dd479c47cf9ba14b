#include "server/web/prometheus_metrics.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/metrics/metrics_registry.h"

namespace gpuprobe {
namespace {

void Family(std::string& out, const char* name, const char* type, const char* help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

// The daemon's own families: its build, queues, jobs, rows and devices.
void AppendDaemonFamilies(std::string& out, const v1::ServerInfo& info,
                          const JobStore::Totals& totals) {
  Family(out, "gpuprobe_build_info", "gauge", "gpuprobed's version and backend; always 1.");
  absl::StrAppend(&out, "gpuprobe_build_info{version=\"", PrometheusLabelValue(info.version()),
                  "\",backend=\"", PrometheusLabelValue(info.backend()), "\"} 1\n");

  // The whole and the parts are families of their own, so that sum() over one counts once.
  Family(out, "gpuprobe_queue_depth", "gauge",
         "Jobs queued or running on this daemon, whatever their device (jobs not pinned to a "
         "device count here only).");
  absl::StrAppend(&out, "gpuprobe_queue_depth ", info.queue_depth(), "\n");
  Family(out, "gpuprobe_device_queue_depth", "gauge",
         "Each device's job running (0 or 1) plus the jobs pinned to it.");
  for (const v1::DeviceStatus& d : info.devices()) {
    absl::StrAppend(&out, "gpuprobe_device_queue_depth{device=\"", d.index(), "\"} ",
                    d.pinned_queue_depth() + (d.running_job_id().empty() ? 0 : 1), "\n");
  }

  Family(out, "gpuprobe_jobs", "gauge",
         "Stored jobs queued or running now (ended jobs: gpuprobe_jobs_finished_total).");
  for (v1::JobState state : {v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING}) {
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

  Family(out, "gpuprobe_device_calibrated_read_bytes_per_second", "gauge",
         "Streaming read bandwidth measured when the device's worker started (0: none).");
  for (const v1::DeviceStatus& d : info.devices()) {
    absl::StrAppend(&out, "gpuprobe_device_calibrated_read_bytes_per_second{device=\"", d.index(),
                    "\",name=\"", PrometheusLabelValue(d.details().name()), "\"} ",
                    absl::StrFormat("%.6g", d.details().calibrated_read_tbps() * 1e12), "\n");
  }
}

// Every device of the fleet sharing the job store: up, and busy.
void AppendFleetFamilies(std::string& out, const v1::ServerInfo& info) {
  Family(out, "gpuprobe_fleet_device_up", "gauge",
         "Each device of every daemon sharing the job store: 1 serving, 0 lost (its daemon "
         "stopped heartbeating).");
  for (const v1::FleetDevice& f : info.fleet()) {
    absl::StrAppend(&out, "gpuprobe_fleet_device_up{host=\"", PrometheusLabelValue(f.host()),
                    "\",daemon=\"", PrometheusLabelValue(f.daemon_id()), "\",device=\"", f.index(),
                    "\",model=\"", PrometheusLabelValue(f.model()), "\"} ",
                    f.state() == "serving" ? 1 : 0, "\n");
  }
  Family(out, "gpuprobe_fleet_device_busy", "gauge",
         "Each device of every daemon sharing the job store: 1 while it runs a job.");
  for (const v1::FleetDevice& f : info.fleet()) {
    absl::StrAppend(&out, "gpuprobe_fleet_device_busy{host=\"", PrometheusLabelValue(f.host()),
                    "\",daemon=\"", PrometheusLabelValue(f.daemon_id()), "\",device=\"", f.index(),
                    "\"} ", f.running_job_id().empty() ? 0 : 1, "\n");
  }
}

// The latest telemetry reading of each device that has one (NVML, after each rep).
void AppendTelemetryFamilies(std::string& out, const v1::ServerInfo& info) {
  struct Gauge {
    const char* name;
    const char* help;
    double (*value)(const v1::TelemetryReading&);
  };
  static constexpr Gauge kGauges[] = {
      {"gpuprobe_device_sm_clock_hertz", "SM clock at the latest reading.",
       [](const v1::TelemetryReading& r) { return r.sm_mhz() * 1e6; }},
      {"gpuprobe_device_memory_clock_hertz", "Memory clock at the latest reading.",
       [](const v1::TelemetryReading& r) { return r.memory_mhz() * 1e6; }},
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
                      absl::StrFormat("%.6g", g.value(d.telemetry())), "\n");
    }
  }
}

}  // namespace

std::string PrometheusMetrics(const v1::ServerInfo& info, const JobStore::Totals& totals) {
  std::string out;
  AppendDaemonFamilies(out, info, totals);
  AppendFleetFamilies(out, info);
  AppendTelemetryFamilies(out, info);
  absl::StrAppend(&out, DaemonMetrics().Render(), ProcessMetrics());
  return out;
}

}  // namespace gpuprobe
