// The device over one job: the readings taken after each rep (JobEvent.telemetry) folded into
// the record's summary, and the engine's readings as protos.
//
//   v1::TelemetrySummary summary = SummarizeTelemetry(readings, "cuda");
#pragma once

#include <string>
#include <vector>

#include "gpuprobe/v1/probe.pb.h"
#include "server/device/backend.h"

namespace gpuprobe {

v1::TelemetryReading ReadingToProto(const TelemetrySample& sample);

// Min / median / max clocks, the highest power and temperature, every throttle reason and
// foreign process seen. No readings: available = false with a note naming `backend`.
v1::TelemetrySummary SummarizeTelemetry(const std::vector<v1::TelemetryReading>& readings,
                                        const std::string& backend);

}  // namespace gpuprobe
