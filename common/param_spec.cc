#include "common/param_spec.h"

#include <cmath>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/param_text.h"
#include "common/status_macros.h"
#include "gpuprobe/v1/param_spec.pb.h"

namespace gpuprobe {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

const v1::ParamSpec& SpecOf(const FieldDescriptor& f) {
  return f.options().GetExtension(v1::param);
}

bool IsNumber(const FieldDescriptor& f) {
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      return true;
    default:
      return false;
  }
}

bool IsNested(const FieldDescriptor& f) {
  return f.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !f.is_repeated() && !f.is_map();
}

// "[2, 10000]", "(0, 86400]", "[1, inf)": the values a number's declaration accepts.
std::string Interval(const v1::ParamSpec& s) {
  return absl::StrCat(
      s.min().empty() ? "(-inf" : absl::StrCat(s.min_exclusive() ? "(" : "[", s.min()), ", ",
      s.max().empty() ? "inf)" : absl::StrCat(s.max(), "]"));
}

// What the declaration accepts, for people: "in [2, 10000]", "a multiple of 16 in [4096, ...]",
// each item's for a list, and how many items; empty where it declares no limit.
std::string LimitsText(const FieldDescriptor& f, const v1::ParamSpec& s) {
  std::string limits;
  if (IsNumber(f) && (!s.min().empty() || !s.max().empty() || s.multiple_of() > 0)) {
    limits = s.multiple_of() > 0 ? absl::StrCat("a multiple of ", s.multiple_of(), " in ")
                                 : std::string("in ");
    absl::StrAppend(&limits, Interval(s));
    if (f.is_repeated()) limits = absl::StrCat("each ", limits);
  }
  if (f.is_repeated() && s.max_items() > 0) {
    absl::StrAppend(&limits, limits.empty() ? "" : ", ", "at most ", s.max_items(), " items");
  }
  return limits;
}

absl::StatusOr<long double> Bound(const FieldDescriptor& f, const std::string& text) {
  double value = 0.0;  // the declarations' bounds are exact in a double
  if (!absl::SimpleAtod(text, &value)) {
    return absl::InternalError(
        absl::StrCat(f.full_name(), ": the declared bound \"", text, "\" is not a number"));
  }
  return static_cast<long double>(value);
}

// Item `index` (0 for a singular field) of a number field; a long double holds every 64-bit
// integer exactly.
long double NumberAt(const FieldDescriptor& f, const Message& m, int index) {
  const Reflection& r = *m.GetReflection();
  const bool rep = f.is_repeated();
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return rep ? r.GetRepeatedInt32(m, &f, index) : r.GetInt32(m, &f);
    case FieldDescriptor::CPPTYPE_INT64:
      return rep ? r.GetRepeatedInt64(m, &f, index) : r.GetInt64(m, &f);
    case FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r.GetRepeatedUInt32(m, &f, index) : r.GetUInt32(m, &f);
    case FieldDescriptor::CPPTYPE_UINT64:
      return rep ? r.GetRepeatedUInt64(m, &f, index) : r.GetUInt64(m, &f);
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return rep ? r.GetRepeatedDouble(m, &f, index) : r.GetDouble(m, &f);
    case FieldDescriptor::CPPTYPE_FLOAT:
      return rep ? r.GetRepeatedFloat(m, &f, index) : r.GetFloat(m, &f);
    default:
      return 0;
  }
}

absl::Status CheckNumber(const FieldDescriptor& f, const v1::ParamSpec& s, const Message& m,
                         int index) {
  const long double value = NumberAt(f, m, index);
  bool ok = !std::isnan(value);
  if (!s.min().empty()) {
    ASSIGN_OR_RETURN(const long double min, Bound(f, s.min()));
    ok = ok && (s.min_exclusive() ? value > min : value >= min);
  }
  if (!s.max().empty()) {
    ASSIGN_OR_RETURN(const long double max, Bound(f, s.max()));
    ok = ok && value <= max;
  }
  if (s.multiple_of() > 0) {
    ok = ok && std::fmod(value, static_cast<long double>(s.multiple_of())) == 0;
  }
  if (ok) return absl::OkStatus();
  const std::string text = ParamValueText(f, m, index);
  return absl::InvalidArgumentError(
      s.multiple_of() > 0 ? absl::StrCat(f.name(), ": ", text, " is not a multiple of ",
                                         s.multiple_of(), " in ", Interval(s))
                          : absl::StrCat(f.name(), ": ", text, " is outside ", Interval(s)));
}

absl::Status CheckEnum(const FieldDescriptor& f, const Message& m, int index) {
  const Reflection& r = *m.GetReflection();
  const int number = f.is_repeated() ? r.GetRepeatedEnumValue(m, &f, index) : r.GetEnumValue(m, &f);
  if (f.enum_type()->FindValueByNumber(number) != nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(f.name(), ": unknown value ", number));
}

bool IsUnset(const FieldDescriptor& f, const Message& m) {
  const Reflection& r = *m.GetReflection();
  if (f.is_repeated()) return r.FieldSize(m, &f) == 0;
  if (f.has_presence()) return !r.HasField(m, &f);
  if (f.cpp_type() == FieldDescriptor::CPPTYPE_ENUM) return r.GetEnumValue(m, &f) == 0;
  if (f.cpp_type() == FieldDescriptor::CPPTYPE_STRING) return r.GetString(m, &f).empty();
  if (f.cpp_type() == FieldDescriptor::CPPTYPE_BOOL) return !r.GetBool(m, &f);
  return NumberAt(f, m, 0) == 0;
}

absl::Status CompleteField(const FieldDescriptor& f, Message& m) {
  const v1::ParamSpec& s = SpecOf(f);
  if (!s.default_value().empty() && IsUnset(f, m)) {
    google::protobuf::Map<std::string, std::string> value;
    value[f.name()] = s.default_value();
    if (absl::Status set = SetParamsFromText(value, m); !set.ok()) {
      return absl::InternalError(absl::StrCat(f.full_name(), ": the declared default \"",
                                              s.default_value(),
                                              "\" does not parse: ", set.message()));
    }
  }
  const Reflection& r = *m.GetReflection();
  const int items = f.is_repeated() ? r.FieldSize(m, &f) : 1;
  if (f.is_repeated() && s.max_items() > 0 && items > static_cast<int>(s.max_items())) {
    return absl::InvalidArgumentError(
        absl::StrCat(f.name(), ": ", items, " items; at most ", s.max_items()));
  }
  if (!f.is_repeated() && f.has_presence() && !r.HasField(m, &f)) return absl::OkStatus();
  for (int i = 0; i < items; ++i) {
    if (IsNumber(f)) RETURN_IF_ERROR(CheckNumber(f, s, m, i));
    if (f.cpp_type() == FieldDescriptor::CPPTYPE_ENUM) RETURN_IF_ERROR(CheckEnum(f, m, i));
  }
  return absl::OkStatus();
}

void AppendFields(const Descriptor& d, std::vector<const FieldDescriptor*>& fields) {
  for (int i = 0; i < d.field_count(); ++i) {
    const FieldDescriptor& f = *d.field(i);
    if (IsNested(f)) {
      AppendFields(*f.message_type(), fields);
    } else if (!f.is_map() && f.cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      fields.push_back(&f);
    }
  }
}

}  // namespace

std::vector<const FieldDescriptor*> DeclaredFields(const Descriptor& descriptor) {
  std::vector<const FieldDescriptor*> fields;
  AppendFields(descriptor, fields);
  return fields;
}

std::vector<v1::ProbeParam> DeclaredParams(const Descriptor& descriptor) {
  std::vector<v1::ProbeParam> params;
  for (const FieldDescriptor* field : DeclaredFields(descriptor)) {
    const FieldDescriptor& f = *field;
    const v1::ParamSpec& s = SpecOf(f);
    v1::ProbeParam p;
    p.set_name(f.name());
    p.set_type(f.is_repeated() ? absl::StrCat("a comma-separated list, each ", ParamValueType(f))
                               : ParamValueType(f));
    p.set_default_value(s.default_text().empty() ? s.default_value() : s.default_text());
    p.set_limits(LimitsText(f, s));
    p.set_description(s.description());
    p.set_unit(s.unit());
    params.push_back(std::move(p));
  }
  return params;
}

absl::Status CompleteParams(Message& message) {
  const Descriptor& d = *message.GetDescriptor();
  const Reflection& r = *message.GetReflection();
  for (int i = 0; i < d.field_count(); ++i) {
    const FieldDescriptor& f = *d.field(i);
    if (IsNested(f)) {
      RETURN_IF_ERROR(CompleteParams(*r.MutableMessage(&message, &f)));
    } else if (!f.is_map() && f.cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      RETURN_IF_ERROR(CompleteField(f, message));
    }
  }
  return absl::OkStatus();
}

}  // namespace gpuprobe
