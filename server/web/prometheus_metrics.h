// The daemon's metrics in Prometheus text exposition format (version 0.0.4), in base units: its
// state now (queues, devices, the fleet; every name prefixed gpuprobe_), then the counters and
// histograms it records (metrics_registry.h) and the process's own process_* metrics.
//
//   std::string text = PrometheusMetrics(manager.Info(version), *manager.Totals());
#pragma once

#include <string>

#include "gpuprobe/v1/probe.pb.h"
#include "server/store/job_store.h"

namespace gpuprobe {

std::string PrometheusMetrics(const gpuprobe::v1::ServerInfo& info, const JobStore::Totals& totals);

}  // namespace gpuprobe
