// One protobuf message as one line of JSON (proto field names, every field printed): the unit
// of the CLI's `--format json` streams, one object per line, and the HTTP API's bodies.
#pragma once

#include <string>

#include "google/protobuf/message.h"
#include "google/protobuf/util/json_util.h"

namespace gpuprobe {

inline std::string ProtoJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string json;
  // Serialising a well-formed message cannot fail.
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

}  // namespace gpuprobe
