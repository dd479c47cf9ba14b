#include "common/param_text.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/abbreviated.h"
#include "common/api_json.h"
#include "common/shortest_double.h"
#include "common/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "gpuprobe/v1/param_spec.pb.h"

namespace gpuprobe {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// The longest prefix, ending in '_', that every value name of the enum shares.
std::string CommonPrefix(const EnumDescriptor& e) {
  std::string prefix = e.value(0)->name();
  for (int i = 1; i < e.value_count(); ++i) {
    const std::string& name = e.value(i)->name();
    size_t n = 0;
    while (n < prefix.size() && n < name.size() && prefix[n] == name[n]) ++n;
    prefix.resize(n);
  }
  const size_t underscore = prefix.rfind('_');
  return underscore == std::string::npos ? "" : prefix.substr(0, underscore + 1);
}

// Whether the field is declared a fraction (ParamSpec.unit "fraction"): it takes "0.5%" too.
bool IsFraction(const FieldDescriptor& f) {
  return f.options().GetExtension(v1::param).unit() == "fraction";
}

bool IsParameter(const FieldDescriptor& f) {
  return !f.is_map() && f.cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE;
}

// Where NAME lives: the field, and the message holding it (`message` or a singular message
// field of it).
struct ParamField {
  const FieldDescriptor* field = nullptr;
  Message* holder = nullptr;
};

ParamField FindParam(Message& message, const std::string& name) {
  const Descriptor& d = *message.GetDescriptor();
  if (const FieldDescriptor* f = d.FindFieldByName(name); f != nullptr && IsParameter(*f)) {
    return {f, &message};
  }
  for (int i = 0; i < d.field_count(); ++i) {
    const FieldDescriptor* sub = d.field(i);
    if (sub->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || sub->is_repeated()) continue;
    const FieldDescriptor* f = sub->message_type()->FindFieldByName(name);
    if (f != nullptr && IsParameter(*f)) {
      return {f, message.GetReflection()->MutableMessage(&message, sub)};
    }
  }
  return {};
}

}  // namespace

std::string ParamValueType(const FieldDescriptor& f) {
  std::string type;
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_ENUM: {
      std::vector<std::string> names;
      for (int i = 0; i < f.enum_type()->value_count(); ++i) {
        if (f.enum_type()->value(i)->number() != 0) {
          names.push_back(EnumValueText(*f.enum_type()->value(i)));
        }
      }
      type = absl::StrCat("one of ", absl::StrJoin(names, "|"));
      break;
    }
    case FieldDescriptor::CPPTYPE_BOOL:
      type = "true or false";
      break;
    case FieldDescriptor::CPPTYPE_STRING:
      type = "text";
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_DOUBLE:
      type = IsFraction(f) ? "a number (or a percentage: 0.5% is 0.005)" : "a number";
      break;
    default:
      type = f.cpp_type() == FieldDescriptor::CPPTYPE_UINT32 ||
                     f.cpp_type() == FieldDescriptor::CPPTYPE_UINT64
                 ? "a non-negative integer"
                 : "an integer";
  }
  return type;
}

namespace {

absl::Status Bad(const FieldDescriptor& f, absl::string_view text) {
  return absl::InvalidArgumentError(
      absl::StrCat("param ", f.name(), ": \"", Abbreviated(text), "\" is not ", ParamValueType(f),
                   f.is_repeated() ? " (it takes a comma-separated list of them)" : ""));
}

// An integer written as decimal digits, '-' first where T is signed (no '+', space or base
// prefix: " 3" and "0x10" are refused, not read as 3 and 16); one past T's range is named as such.
template <typename T>
absl::StatusOr<T> Integer(const FieldDescriptor& f, absl::string_view text) {
  absl::string_view digits = text;
  if (std::is_signed_v<T>) absl::ConsumePrefix(&digits, "-");
  T v;
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit)) {
    return Bad(f, text);
  }
  if (!absl::SimpleAtoi(text, &v)) {
    return absl::InvalidArgumentError(absl::StrCat("param ", f.name(), ": ", Abbreviated(text),
                                                   " is outside [", std::numeric_limits<T>::min(),
                                                   ", ", std::numeric_limits<T>::max(), "]"));
  }
  return v;
}

// Sets (or, repeated, adds) one value.
absl::Status SetOne(const FieldDescriptor& f, Message& m, absl::string_view text) {
  const Reflection& r = *m.GetReflection();
  const bool rep = f.is_repeated();
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      ASSIGN_OR_RETURN(const int32_t v, Integer<int32_t>(f, text));
      rep ? r.AddInt32(&m, &f, v) : r.SetInt32(&m, &f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      ASSIGN_OR_RETURN(const int64_t v, Integer<int64_t>(f, text));
      rep ? r.AddInt64(&m, &f, v) : r.SetInt64(&m, &f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      ASSIGN_OR_RETURN(const uint32_t v, Integer<uint32_t>(f, text));
      rep ? r.AddUInt32(&m, &f, v) : r.SetUInt32(&m, &f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      ASSIGN_OR_RETURN(const uint64_t v, Integer<uint64_t>(f, text));
      rep ? r.AddUInt64(&m, &f, v) : r.SetUInt64(&m, &f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      double v;
      absl::string_view number = text;
      const bool percent = IsFraction(f) && absl::ConsumeSuffix(&number, "%");
      if (number != absl::StripAsciiWhitespace(number) || !absl::SimpleAtod(number, &v)) {
        return Bad(f, text);
      }
      if (percent) v /= 100.0;
      if (f.cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
        rep ? r.AddFloat(&m, &f, static_cast<float>(v)) : r.SetFloat(&m, &f, static_cast<float>(v));
      } else {
        rep ? r.AddDouble(&m, &f, v) : r.SetDouble(&m, &f, v);
      }
      break;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      bool v;
      if (!absl::SimpleAtob(text, &v)) return Bad(f, text);
      rep ? r.AddBool(&m, &f, v) : r.SetBool(&m, &f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING:
      rep ? r.AddString(&m, &f, std::string(text)) : r.SetString(&m, &f, std::string(text));
      break;
    case FieldDescriptor::CPPTYPE_ENUM: {
      const EnumDescriptor& e = *f.enum_type();
      const EnumValueDescriptor* match = nullptr;
      for (int i = 0; i < e.value_count(); ++i) {
        if (e.value(i)->number() != 0 && absl::EqualsIgnoreCase(EnumValueText(*e.value(i)), text)) {
          match = e.value(i);
        }
      }
      if (match == nullptr) return Bad(f, text);
      rep ? r.AddEnum(&m, &f, match) : r.SetEnum(&m, &f, match);
      break;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return Bad(f, text);
  }
  return absl::OkStatus();
}

}  // namespace

std::string ParamValueText(const FieldDescriptor& f, const Message& m, int index) {
  const Reflection& r = *m.GetReflection();
  const bool rep = f.is_repeated();
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(rep ? r.GetRepeatedInt32(m, &f, index) : r.GetInt32(m, &f));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(rep ? r.GetRepeatedInt64(m, &f, index) : r.GetInt64(m, &f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(rep ? r.GetRepeatedUInt32(m, &f, index) : r.GetUInt32(m, &f));
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(rep ? r.GetRepeatedUInt64(m, &f, index) : r.GetUInt64(m, &f));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return ShortestDouble(rep ? r.GetRepeatedDouble(m, &f, index) : r.GetDouble(m, &f));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return ShortestDouble(rep ? r.GetRepeatedFloat(m, &f, index) : r.GetFloat(m, &f));
    case FieldDescriptor::CPPTYPE_BOOL:
      return (rep ? r.GetRepeatedBool(m, &f, index) : r.GetBool(m, &f)) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_STRING:
      return rep ? r.GetRepeatedString(m, &f, index) : r.GetString(m, &f);
    case FieldDescriptor::CPPTYPE_ENUM:
      return EnumValueText(*(rep ? r.GetRepeatedEnum(m, &f, index) : r.GetEnum(m, &f)));
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return "";
}

namespace {

void AppendParamsAsText(const Message& m,
                        std::vector<std::pair<std::string, std::string>>& params) {
  const Descriptor& d = *m.GetDescriptor();
  const Reflection& r = *m.GetReflection();
  for (int i = 0; i < d.field_count(); ++i) {
    const FieldDescriptor& f = *d.field(i);
    if (IsParameter(f)) {
      std::vector<std::string> items;
      if (f.is_repeated()) {
        for (int k = 0; k < r.FieldSize(m, &f); ++k) items.push_back(ParamValueText(f, m, k));
      } else if (!f.has_presence() || r.HasField(m, &f)) {
        items.push_back(ParamValueText(f, m, 0));
      }
      params.emplace_back(f.name(), absl::StrJoin(items, ","));
    } else if (f.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !f.is_repeated()) {
      AppendParamsAsText(r.GetMessage(m, &f), params);
    }
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ParamsAsText(const Message& message) {
  std::vector<std::pair<std::string, std::string>> params;
  AppendParamsAsText(message, params);
  return params;
}

std::string EnumValueText(const EnumValueDescriptor& value) {
  std::string text = value.name().substr(CommonPrefix(*value.type()).size());
  std::transform(text.begin(), text.end(), text.begin(),
                 [](char c) { return c == '_' ? '-' : absl::ascii_tolower(c); });
  return text;
}

std::vector<std::string> ParamNames(const Descriptor& d) {
  std::vector<std::string> names;
  for (int i = 0; i < d.field_count(); ++i) {
    const FieldDescriptor* f = d.field(i);
    if (IsParameter(*f)) {
      names.push_back(f->name());
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !f->is_repeated()) {
      for (const std::string& name : ParamNames(*f->message_type())) names.push_back(name);
    }
  }
  return names;
}

absl::Status SetParamsFromText(const google::protobuf::Map<std::string, std::string>& values,
                               Message& message) {
  // In name order, so that the first bad parameter named is the same every time.
  std::vector<std::pair<std::string, std::string>> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [name, text] : sorted) {
    const ParamField p = FindParam(message, name);
    if (p.field == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("param ", Abbreviated(name), ": not a parameter of this probe (it takes ",
                       absl::StrJoin(ParamNames(*message.GetDescriptor()), ", "), ")"));
    }
    if (!p.field->is_repeated()) {
      RETURN_IF_ERROR(SetOne(*p.field, *p.holder, text));
      continue;
    }
    p.holder->GetReflection()->ClearField(p.holder, p.field);
    if (p.field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM &&
        absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(text), "all")) {
      const EnumDescriptor& e = *p.field->enum_type();
      for (int i = 0; i < e.value_count(); ++i) {
        if (e.value(i)->number() != 0)
          p.holder->GetReflection()->AddEnum(p.holder, p.field, e.value(i));
      }
      continue;
    }
    if (absl::StripAsciiWhitespace(text).empty()) continue;  // an empty list
    for (absl::string_view item : absl::StrSplit(text, ',')) {
      if (absl::StripAsciiWhitespace(item).empty()) {
        return absl::InvalidArgumentError(absl::StrCat("param ", name, ": \"", Abbreviated(text),
                                                       "\" has an empty item (a list is a,b,c)"));
      }
      RETURN_IF_ERROR(SetOne(*p.field, *p.holder, absl::StripAsciiWhitespace(item)));
    }
  }
  return absl::OkStatus();
}

absl::Status UnpackParams(const gpuprobe::v1::ProbeRequest& request, Message& message) {
  message.Clear();
  const std::string& want = message.GetDescriptor()->full_name();
  if (request.has_params() + !request.param_values().empty() + !request.params_json().empty() > 1) {
    return absl::InvalidArgumentError("params: set one of params, param_values and params_json");
  }
  if (!request.params_json().empty()) {
    // The API's JSON: protobuf's mapping, enum values also as the CLI spells them ("graph").
    const absl::Status parsed = ApiJsonToMessage(request.params_json(), &message);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("params_json: not a ", want, " (", Abbreviated(parsed.message()), ")"));
    }
    return absl::OkStatus();
  }
  if (!request.has_params()) return SetParamsFromText(request.param_values(), message);
  if (!request.params().UnpackTo(&message)) {
    std::string got = request.params().type_url();
    if (const size_t slash = got.rfind('/'); slash != std::string::npos) got.erase(0, slash + 1);
    return absl::InvalidArgumentError(absl::StrCat("params: probe \"", request.probe(),
                                                   "\" takes a ", want, ", not \"",
                                                   Abbreviated(got), "\""));
  }
  return absl::OkStatus();
}

}  // namespace gpuprobe
