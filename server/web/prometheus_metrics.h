// The daemon's metrics in Prometheus text exposition format (version 0.0.4), every name
// prefixed gpuprobe_.
//
//   std::string text = PrometheusMetrics(manager.Info(version), *manager.Totals());
#pragma once

#include <string>

#include "gpuprobe/v1/probe.pb.h"
#include "server/store/job_store.h"

namespace gpuprobe {

std::string PrometheusMetrics(const gpuprobe::v1::ServerInfo& info, const JobStore::Totals& totals);

}  // namespace gpuprobe
