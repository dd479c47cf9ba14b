// moe-union's Row (the message its v1 clients read) and the Result it reports since it became an
// ordinary probe, both ways. The store reads a Row that an older gpuprobed stored as that Result,
// so every reader sees one kind; the API turns Results back into Rows for v1 clients
// (server/api/moe_union_row_view.h).
//
//   v1::Result r = ResultOfRow(stored_row);
//   v1::Row row = RowOfResult(r, started.sweep());
#pragma once

#include <optional>

#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

// A moe-union arm's Result: axes variant, t, slots, union; metrics gu_us and down_us; derived
// values by name (section_us, the bandwidth columns, the bytes read, vs_reference with its
// interval); the verdict against the reference row.
v1::Result ResultOfRow(const v1::Row& row);

// The Row a v1 client reads for a moe-union Result; `sweep` (the job's JobStarted.sweep) gives
// its timing and cache.
v1::Row RowOfResult(const v1::Result& result, const v1::ResolvedSweep& sweep);

// The moe-union arm these axes name; nullopt when they are not a moe-union arm's.
std::optional<v1::Arm> ArmOfAxes(const google::protobuf::RepeatedPtrField<v1::AxisValue>& axes);

// The stored event as readers see it today: a Row as its Result, anything else as it is.
v1::JobEvent UpgradedEvent(v1::JobEvent event);

}  // namespace gpuprobe
