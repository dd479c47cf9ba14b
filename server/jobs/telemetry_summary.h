// The device over one job: the readings taken after each rep (JobEvent.telemetry) folded into
// the record's summary.
//
//   v1::TelemetrySummary summary = SummarizeTelemetry(readings, "cuda");
#pragma once

#include <string>
#include <vector>

#include "gpuprobe/v1/probe.pb.h"
#include "server/device/backend.h"

namespace gpuprobe {

// Min / median / max clocks, the highest power and temperature, every throttle reason and
// foreign process seen. No readings: available = false with a note naming `backend`.
v1::TelemetrySummary SummarizeTelemetry(const std::vector<v1::TelemetryReading>& readings,
                                        const std::string& backend);

}  // namespace gpuprobe
