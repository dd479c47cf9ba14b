#include "server/probes/command/command_registrations.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/api_json.h"
#include "common/status_macros.h"

namespace gpuprobe {
namespace {

constexpr uint32_t kDefaultMaxSeconds = 600;
constexpr uint32_t kMostSeconds = 86400;
constexpr uint64_t kDefaultMaxOutputBytes = uint64_t{16} << 20;
constexpr uint64_t kMostOutputBytes = uint64_t{1} << 30;
constexpr uint32_t kDefaultMaxLines = 100000;
constexpr uint32_t kMostStringLength = 4096;

absl::Status Invalid(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

absl::Status CheckRegistration(v1::CommandRegistration& c, const std::string& where) {
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9_-]{0,63}");
  static const std::regex kEnv("[A-Z_][A-Z0-9_]{0,127}");
  static const std::regex kArg("--?[A-Za-z0-9][A-Za-z0-9_-]{0,63}");
  if (!std::regex_match(c.name(), kName)) {
    return Invalid(where,
                   absl::StrFormat("name \"%s\" is not 1-64 letters, digits, - and _", c.name()));
  }
  const std::string here = absl::StrCat(where, " command ", c.name());
  struct stat st {};
  if (!absl::StartsWith(c.path(), "/") || stat(c.path().c_str(), &st) != 0 ||
      !S_ISREG(st.st_mode) || access(c.path().c_str(), X_OK) != 0) {
    return Invalid(here, absl::StrFormat("path \"%s\" is not an absolute path to an executable "
                                         "file",
                                         c.path()));
  }
  std::set<std::string> names;
  for (v1::CommandParam& p : *c.mutable_params()) {
    const std::string param = absl::StrCat(here, " param ", p.name());
    if (!std::regex_match(p.name(), kName) || !names.insert(p.name()).second) {
      return Invalid(param, "names must be unique, 1-64 letters, digits, - and _");
    }
    if (p.name() == "command") return Invalid(param, "\"command\" names the command itself");
    if (p.env().empty() == p.arg().empty()) return Invalid(param, "give one of env and arg");
    if (!p.env().empty() && !std::regex_match(p.env(), kEnv)) {
      return Invalid(param,
                     absl::StrFormat("env \"%s\" is not an environment variable name", p.env()));
    }
    if (!p.arg().empty() && !std::regex_match(p.arg(), kArg)) {
      return Invalid(param, absl::StrFormat("arg \"%s\" is not a flag like --t", p.arg()));
    }
    if (p.type() == v1::CommandParam::INTEGER) {
      if (p.min() > p.max()) return Invalid(param, "min is above max");
    } else if (p.type() == v1::CommandParam::STRING) {
      if (p.max_length() == 0 || p.max_length() > kMostStringLength) {
        return Invalid(param, absl::StrFormat("max_length must be 1..%d", kMostStringLength));
      }
    } else {
      return Invalid(param, "type must be INTEGER or STRING");
    }
  }
  if (c.max_seconds() == 0) c.set_max_seconds(kDefaultMaxSeconds);
  if (c.max_seconds() > kMostSeconds) {
    return Invalid(here, absl::StrFormat("max_seconds must be at most %d", kMostSeconds));
  }
  if (c.max_output_bytes() == 0) c.set_max_output_bytes(kDefaultMaxOutputBytes);
  if (c.max_output_bytes() > kMostOutputBytes) {
    return Invalid(here, absl::StrFormat("max_output_bytes must be at most %d", kMostOutputBytes));
  }
  if (c.max_lines() == 0) c.set_max_lines(kDefaultMaxLines);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<v1::CommandRegistration>> LoadCommandRegistrations(
    const std::vector<std::string>& name_equals_path, const std::string& file) {
  std::vector<v1::CommandRegistration> commands;
  for (const std::string& flag : name_equals_path) {
    const size_t eq = flag.find('=');
    if (eq == std::string::npos) {
      return Invalid("--probe-command", absl::StrFormat("\"%s\" is not NAME=PATH", flag));
    }
    v1::CommandRegistration c;
    c.set_name(flag.substr(0, eq));
    c.set_path(flag.substr(eq + 1));
    RETURN_IF_ERROR(CheckRegistration(c, "--probe-command"));
    commands.push_back(std::move(c));
  }
  if (!file.empty()) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return Invalid("--probe-commands", absl::StrFormat("cannot read %s", file));
    v1::CommandProbeConfig config;
    if (const absl::Status parsed = ApiJsonToMessage(text.str(), &config); !parsed.ok()) {
      return Invalid("--probe-commands", absl::StrCat(file, ": ", parsed.message()));
    }
    for (v1::CommandRegistration& c : *config.mutable_commands()) {
      RETURN_IF_ERROR(CheckRegistration(c, absl::StrCat("--probe-commands ", file)));
      commands.push_back(std::move(c));
    }
  }
  std::set<std::string> names;
  for (const v1::CommandRegistration& c : commands) {
    if (!names.insert(c.name()).second) {
      return Invalid("--probe-command", absl::StrFormat("\"%s\" is registered twice", c.name()));
    }
  }
  return commands;
}

}  // namespace gpuprobe
