#include "common/api_json.h"

#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/enum_names.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace gpuprobe {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using Json = nlohmann::ordered_json;

// Which way a tree is rewritten: protobuf's mapping to ApiJson's names, or back.
enum class Toward { kApi, kProtobuf };

void RewriteEnum(Json& value, const EnumDescriptor& type, Toward toward) {
  if (!value.is_string()) return;  // a number: a value this build does not know
  const std::string name = value.get<std::string>();
  if (toward == Toward::kApi) {
    const google::protobuf::EnumValueDescriptor* v = type.FindValueByName(name);
    if (v != nullptr) value = v->number() == 0 ? Json(nullptr) : Json(ShortEnumName(*v));
    return;
  }
  for (int i = 0; i < type.value_count(); ++i) {
    if (ShortEnumName(*type.value(i)) == name) value = type.value(i)->name();
  }
}

void Rewrite64(Json& value, FieldDescriptor::CppType type, Toward toward) {
  if (toward == Toward::kProtobuf) {
    if (value.is_number_integer()) value = value.dump();
    return;
  }
  if (!value.is_string()) return;
  const std::string text = value.get<std::string>();
  if (type == FieldDescriptor::CPPTYPE_UINT64) {
    uint64_t n = 0;
    if (absl::SimpleAtoi(text, &n)) value = n;
  } else {
    int64_t n = 0;
    if (absl::SimpleAtoi(text, &n)) value = n;
  }
}

void RewriteMessage(Json& object, const Descriptor& type, Toward toward);

void RewriteValue(Json& value, const FieldDescriptor& field, Toward toward) {
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_ENUM:
      RewriteEnum(value, *field.enum_type(), toward);
      break;
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT64:
      Rewrite64(value, field.cpp_type(), toward);
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      RewriteMessage(value, *field.message_type(), toward);
      break;
    default:
      break;
  }
}

// protobuf's well-known types (Timestamp, Any's payload aside) keep their own JSON forms.
bool WellKnown(const Descriptor& type) {
  return absl::StartsWith(type.file()->name(), "google/protobuf/");
}

void RewriteMessage(Json& object, const Descriptor& type, Toward toward) {
  if (!object.is_object()) return;
  const Descriptor* fields_of = &type;
  if (type.full_name() == "google.protobuf.Any") {
    const auto at = object.find("@type");
    if (at == object.end() || !at->is_string()) return;
    const std::string url = at->get<std::string>();
    fields_of = google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(
        url.substr(url.rfind('/') + 1));
    if (fields_of == nullptr) return;
  }
  if (WellKnown(*fields_of)) return;
  for (auto& [key, value] : object.items()) {
    const FieldDescriptor* field = fields_of->FindFieldByName(key);
    if (field == nullptr) field = fields_of->FindFieldByCamelcaseName(key);
    if (field == nullptr || value.is_null()) continue;
    if (field->is_map()) {
      for (auto& entry : value) RewriteValue(entry, *field->message_type()->map_value(), toward);
    } else if (field->is_repeated()) {
      for (auto& element : value) RewriteValue(element, *field, toward);
    } else {
      RewriteValue(value, *field, toward);
    }
  }
}

}  // namespace

std::string ApiJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string text;
  // A well-formed message of the generated pool always serialises, and its JSON always parses.
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  Json tree = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (tree.is_discarded()) return text;
  RewriteMessage(tree, *message.GetDescriptor(), Toward::kApi);
  return tree.dump(-1, ' ', false, Json::error_handler_t::replace);
}

absl::Status ApiJsonToMessage(std::string_view json, google::protobuf::Message* message) {
  Json tree = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (tree.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  RewriteMessage(tree, *message->GetDescriptor(), Toward::kProtobuf);
  const auto parsed = google::protobuf::util::JsonStringToMessage(tree.dump(), message);
  if (!parsed.ok()) return absl::InvalidArgumentError(parsed.message().as_string());
  return absl::OkStatus();
}

}  // namespace gpuprobe
