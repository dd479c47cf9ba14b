// A probe's parameter message from NAME=VALUE text (ProbeRequest.param_values, what
// `gpuprobe run PROBE --param NAME=VALUE` sends), by protobuf reflection, so that every probe
// whose parameters are a message takes text parameters without code of its own.
//
// NAME is a field of the message, or a field of one of its singular message fields (flattened:
// "hidden" sets geometry.hidden). Integers are decimal; a number declared a fraction (ParamSpec
// unit "fraction") takes a percentage too ("0.5%"); enums are their value names without the
// enum's common prefix, in any case, with '-' for '_' ("graph", "per-slot"), and a list of them
// takes "all" (every value); booleans are true or false; repeated fields take comma-separated
// lists. Map fields are not parameters.
//
//   v1::SweepRequest sweep;
//   RETURN_IF_ERROR(SetParamsFromText(request.param_values(), sweep));
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/map.h"
#include "google/protobuf/message.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

// INVALID_ARGUMENT names the parameter and what it takes; `message` is left partly set then.
absl::Status SetParamsFromText(const google::protobuf::Map<std::string, std::string>& values,
                               google::protobuf::Message& message);

// The request's parameters into `message` (cleared first): its params, which must hold a
// message of `message`'s type, or its param_values. INVALID_ARGUMENT names `params` when it
// holds another type or both are set.
absl::Status UnpackParams(const gpuprobe::v1::ProbeRequest& request,
                          google::protobuf::Message& message);

// The names SetParamsFromText takes for messages of this type, in field order.
std::vector<std::string> ParamNames(const google::protobuf::Descriptor& descriptor);

// The message's parameters as text, in ParamNames order, each as SetParamsFromText reads it
// back (lists comma-separated; an unset optional field empty).
std::vector<std::pair<std::string, std::string>> ParamsAsText(
    const google::protobuf::Message& message);

// What one value of the field must be (each item, for a list), for people: "an integer",
// "one of events|graph", "true or false".
std::string ParamValueType(const google::protobuf::FieldDescriptor& field);

// One value of the field (item `index` of a list) as SetParamsFromText reads it back.
std::string ParamValueText(const google::protobuf::FieldDescriptor& field,
                           const google::protobuf::Message& message, int index);

// An enum value's text form: its name without the enum's common prefix, lower case, '-' for '_'
// (TIMING_MODE_GRAPH: "graph", KERNEL_VARIANT_PER_SLOT: "per-slot").
std::string EnumValueText(const google::protobuf::EnumValueDescriptor& value);

}  // namespace gpuprobe
