#include "client/param_flags.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/param_spec.h"
#include "common/param_text.h"
#include "gpuprobe/v1/param_spec.pb.h"

namespace gpuprobe {
namespace {

using google::protobuf::FieldDescriptor;

// "experts in the weight banks (default 512, $MEMRA_MOEU_EXPERTS; in [1, 8192])".
std::string Help(const v1::ProbeParam& p, const std::string& env) {
  std::vector<std::string> notes;
  if (!p.default_value().empty()) notes.push_back(absl::StrCat("default ", p.default_value()));
  if (!env.empty()) notes.push_back(absl::StrCat("$", env));
  std::string help = p.description();
  if (!notes.empty()) absl::StrAppend(&help, " (", absl::StrJoin(notes, ", "));
  if (!p.limits().empty()) absl::StrAppend(&help, notes.empty() ? " (" : "; ", p.limits());
  if (!notes.empty() || !p.limits().empty()) absl::StrAppend(&help, ")");
  return help;
}

// What CLI11 shows for the flag's value: "N", "N,N", "events|graph".
std::string TypeName(const FieldDescriptor& f) {
  std::string one = "N";
  if (f.cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
    std::vector<std::string> names;
    for (int i = 0; i < f.enum_type()->value_count(); ++i) {
      if (f.enum_type()->value(i)->number() != 0) {
        names.push_back(EnumValueText(*f.enum_type()->value(i)));
      }
    }
    if (f.is_repeated()) names.push_back("all");
    return absl::StrJoin(names, "|");
  }
  if (f.cpp_type() == FieldDescriptor::CPPTYPE_STRING) one = "TEXT";
  return f.is_repeated() ? absl::StrCat(one, ",", one) : one;
}

}  // namespace

void ParamFlags::Bind(CLI::App& app, const google::protobuf::Descriptor& descriptor) {
  const std::vector<const FieldDescriptor*> fields = DeclaredFields(descriptor);
  const std::vector<v1::ProbeParam> params = DeclaredParams(descriptor);
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldDescriptor& f = *fields[i];
    if (!f.options().HasExtension(v1::param)) continue;  // set by its command's own flag
    const v1::ParamSpec& spec = f.options().GetExtension(v1::param);
    std::string flag = spec.flag().empty() ? f.name() : spec.flag();
    std::replace(flag.begin(), flag.end(), '_', '-');
    Flag& bound =
        flags_.emplace_back(Flag{.app = &app, .param = f.name(), .flag = flag, .env = spec.env()});
    const std::string help = Help(params[i], spec.env());
    if (f.cpp_type() == FieldDescriptor::CPPTYPE_BOOL && !f.is_repeated()) {
      app.add_flag(absl::StrCat("--", flag), bound.set, help);
    } else if (f.is_repeated()) {
      app.add_option(absl::StrCat("--", flag), bound.values, help)
          ->delimiter(',')
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
          ->type_name(TypeName(f));
    } else {
      app.add_option(absl::StrCat("--", flag), bound.values, help)
          ->expected(1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
          ->type_name(TypeName(f));
    }
  }
}

absl::Status ParamFlags::Fill(const EnvLookup& env, google::protobuf::Message& message) const {
  for (const Flag& flag : flags_) {
    if (!flag.app->parsed()) continue;  // another command's
    std::string text;
    std::string source = absl::StrCat("--", flag.flag);
    if (flag.set) {
      text = "true";
    } else if (!flag.values.empty()) {
      text = absl::StrJoin(flag.values, ",");
    } else if (std::optional<std::string> value;
               !flag.env.empty() && (value = env(flag.env.c_str()))) {
      text = *value;
      source = flag.env;
    } else {
      continue;
    }
    google::protobuf::Map<std::string, std::string> one;
    one[flag.param] = text;
    if (absl::Status s = SetParamsFromText(one, message); !s.ok()) {
      // "param t_max: ..." names the field; the user wrote the flag or the variable.
      absl::string_view why = s.message();
      absl::ConsumePrefix(&why, absl::StrCat("param ", flag.param, ": "));
      return absl::InvalidArgumentError(absl::StrCat(source, ": ", why));
    }
  }
  return absl::OkStatus();
}

}  // namespace gpuprobe
