#include "common/api_json.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
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

// An Any whose type this build does not know (a newer daemon's probe): protobuf cannot print it,
// so it is cleared from a copy of the message and printed apart, as its type and base64 payload.
struct UnknownAny {
  Json::json_pointer at;
  std::string type_url;
  std::string value;
};

// `key` as one reference token of a JSON pointer.
std::string PointerToken(const std::string& key) {
  std::string escaped;
  for (const char c : key) escaped += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return escaped;
}

std::string MapKey(const google::protobuf::Message& entry) {
  const FieldDescriptor* key = entry.GetDescriptor()->map_key();
  const google::protobuf::Reflection* r = entry.GetReflection();
  switch (key->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      return r->GetString(entry, key);
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(r->GetInt32(entry, key));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(r->GetInt64(entry, key));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(r->GetUInt32(entry, key));
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(r->GetUInt64(entry, key));
    default:
      return r->GetBool(entry, key) ? "true" : "false";
  }
}

void TakeUnknownAnys(google::protobuf::Message& message, const std::string& at,
                     std::vector<UnknownAny>& taken) {
  const Descriptor& type = *message.GetDescriptor();
  const google::protobuf::Reflection* r = message.GetReflection();
  if (type.full_name() == "google.protobuf.Any") {
    const std::string url = r->GetString(message, type.FindFieldByName("type_url"));
    if (url.empty() || google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(
                           url.substr(url.rfind('/') + 1)) != nullptr) {
      return;
    }
    taken.push_back(
        {Json::json_pointer(at), url, r->GetString(message, type.FindFieldByName("value"))});
    message.Clear();
    return;
  }
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const std::string path = absl::StrCat(at, "/", field->name());
    if (!field->is_repeated()) {
      TakeUnknownAnys(*r->MutableMessage(&message, field), path, taken);
      continue;
    }
    for (int i = 0; i < r->FieldSize(message, field); ++i) {
      google::protobuf::Message& element = *r->MutableRepeatedMessage(&message, field, i);
      if (!field->is_map()) {
        TakeUnknownAnys(element, absl::StrCat(path, "/", i), taken);
        continue;
      }
      const FieldDescriptor* value = element.GetDescriptor()->map_value();
      if (value->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) break;
      TakeUnknownAnys(*element.GetReflection()->MutableMessage(&element, value),
                      absl::StrCat(path, "/", PointerToken(MapKey(element))), taken);
    }
  }
}

}  // namespace

std::string ApiJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::unique_ptr<google::protobuf::Message> printable(message.New());
  printable->CopyFrom(message);
  std::vector<UnknownAny> unknown;
  TakeUnknownAnys(*printable, "", unknown);
  std::string text;
  // A well-formed message of the generated pool, its unknown Anys taken out, always serialises,
  // and its JSON always parses.
  (void)google::protobuf::util::MessageToJsonString(*printable, &text, options);
  Json tree = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (tree.is_discarded()) return text;
  RewriteMessage(tree, *message.GetDescriptor(), Toward::kApi);
  for (const UnknownAny& any : unknown) {
    tree[any.at] = Json{{"@type", any.type_url}, {"value", absl::Base64Escape(any.value)}};
  }
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
