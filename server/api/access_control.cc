#include "server/api/access_control.h"

#include <fstream>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpuprobe {
namespace {

std::string RoleName(Role role) {
  switch (role) {
    case Role::kRead:
      return "read";
    case Role::kSubmit:
      return "submit";
    case Role::kKernel:
      return "kernel";
    case Role::kAdmin:
      return "admin";
  }
  return "?";
}

}  // namespace

absl::StatusOr<AccessControl> AccessControl::FromFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrFormat("tokens: cannot read %s", path));
  AccessControl access;
  std::map<std::string, int> line_of;  // each token's line
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string content(absl::StripAsciiWhitespace(line.substr(0, line.find('#'))));
    if (content.empty()) continue;
    const std::vector<std::string> fields = absl::StrSplit(content, ' ', absl::SkipEmpty());
    Role role;
    if (fields.size() != 3) {
      return absl::InvalidArgumentError(
          absl::StrFormat("tokens: %s line %d: expected \"TOKEN ROLE NAME\"", path, number));
    }
    if (fields[1] == "read") {
      role = Role::kRead;
    } else if (fields[1] == "submit") {
      role = Role::kSubmit;
    } else if (fields[1] == "kernel") {
      role = Role::kKernel;
    } else if (fields[1] == "admin") {
      role = Role::kAdmin;
    } else {
      return absl::InvalidArgumentError(
          absl::StrFormat("tokens: %s line %d: role \"%s\" is not read, submit, kernel or admin",
                          path, number, fields[1]));
    }
    if (const auto [it, added] = line_of.emplace(fields[0], number); !added) {
      return absl::InvalidArgumentError(
          absl::StrFormat("tokens: %s line %d: the token of line %d again; each token names one "
                          "caller with one role",
                          path, number, it->second));
    }
    access.tokens_[fields[0]] = Caller{.name = fields[2], .role = role, .key_scope = fields[2]};
  }
  if (access.tokens_.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("tokens: %s holds no token", path));
  }
  return access;
}

absl::StatusOr<Caller> AccessControl::Authorize(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata, const std::string& peer,
    Role needed, const std::string& what) const {
  if (!enabled()) return Caller{.name = peer, .role = Role::kAdmin};
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return absl::UnauthenticatedError(
        absl::StrFormat("%s needs a token: send \"authorization: Bearer TOKEN\" "
                        "(gpuprobe: GPUPROBE_TOKEN)",
                        what));
  }
  absl::string_view value(it->second.data(), it->second.size());
  // The scheme is case-insensitive (RFC 7235), and one or more spaces may follow it.
  if (!absl::StartsWithIgnoreCase(value, "bearer ")) {
    return absl::UnauthenticatedError("authorization: expected \"Bearer TOKEN\"");
  }
  value = absl::StripLeadingAsciiWhitespace(value.substr(7));
  auto token = tokens_.find(std::string(value));
  if (token == tokens_.end()) return absl::UnauthenticatedError("authorization: unknown token");
  if (token->second.role < needed) {
    return absl::PermissionDeniedError(absl::StrFormat("%s needs the %s role; token \"%s\" has %s",
                                                       what, RoleName(needed), token->second.name,
                                                       RoleName(token->second.role)));
  }
  return token->second;
}

}  // namespace gpuprobe
