// HOST:PORT as gpuprobed's listeners (--listen, --http) and the client's --server take it: a
// host (a name, an IPv4 address, or an IPv6 address in brackets) and a port written in decimal
// digits alone, nothing before or after, within its range.
//
//   ASSIGN_OR_RETURN(HostPort server, ParseHostPort("--server", text, /*min_port=*/1));
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"

namespace gpuprobe {

struct HostPort {
  std::string host;
  int port = 0;
};

// INVALID_ARGUMENT naming `flag`, the text and the port range [min_port, 65535].
inline absl::StatusOr<HostPort> ParseHostPort(std::string_view flag, std::string_view text,
                                              int min_port) {
  const auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: \"%s\" is not HOST:PORT with a port in %d..65535", flag, text, min_port));
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad();
  const std::string_view host = text.substr(0, colon), digits = text.substr(colon + 1);
  const bool bracketed = host.front() == '[' && host.back() == ']' && host.size() > 2;
  if (!bracketed && host.find_first_of(":[]") != std::string_view::npos) return bad();
  // A host name's or an address's characters (a space or a '/' would reach the resolver).
  for (const char c : bracketed ? host.substr(1, host.size() - 2) : host) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '-' && c != '_' && c != ':' && c != '%') {
      return bad();
    }
  }
  if (digits.empty() || digits.size() > 5) return bad();
  int port = 0;
  for (const char c : digits) {
    if (!absl::ascii_isdigit(c)) return bad();
    port = port * 10 + (c - '0');
  }
  if (port < min_port || port > 65535) return bad();
  return HostPort{.host = std::string(host), .port = port};
}

}  // namespace gpuprobe
