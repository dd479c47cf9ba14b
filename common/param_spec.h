// A probe's parameters as its params message declares them: each field's (gpuprobe.v1.param)
// option (proto/gpuprobe/v1/param_spec.proto) holds its default, limits, unit and description,
// and these functions read them by reflection, so that a probe writes a parameter once:
//   DeclaredParams    ProbeInfo.params, for `gpuprobe probes` and the page;
//   CompleteParams    every unset field given its default, every value checked against its
//                     limits: the resolved spec's fields, all set.
//
//   for (const v1::ProbeParam& p : DeclaredParams(*v1::ReadBandwidthParams::descriptor())) ...
//   RETURN_IF_ERROR(CompleteParams(params));
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

// The message's parameter fields: every field but maps and messages, nested singular messages
// flattened (ParamNames order).
std::vector<const google::protobuf::FieldDescriptor*> DeclaredFields(
    const google::protobuf::Descriptor& descriptor);

// The message's parameters (DeclaredFields order) with their type,
// default, limits, unit and description. A field without the option is listed bare.
std::vector<v1::ProbeParam> DeclaredParams(const google::protobuf::Descriptor& descriptor);

// Sets every field (of nested messages too) that a request left unset to its declared default
// (a field with presence that is not set, an empty list, a zero enum, a zero scalar without
// presence), then checks every declared limit. INVALID_ARGUMENT names the field, the value and
// the limit ("reps: 1 is outside [2, 10000]"); INTERNAL for a declaration that does not parse.
absl::Status CompleteParams(google::protobuf::Message& message);

}  // namespace gpuprobe
