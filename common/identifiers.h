// The one validation of identifiers that requests and flags carry: an idempotency key or a GPU
// model is printable text (no control character, NUL included); a host is a host name (letters,
// digits, '.', '-', '_'), as a daemon's --host-name and a job's target alike, so that a job can
// only name a host some daemon may have (issue 55, item 13: a host of "../x" or with a NUL
// stayed queued for ever).
//
//   RETURN_IF_ERROR(CheckPrintable("idempotency_key", key, 128));
//   RETURN_IF_ERROR(CheckHostName("host", host));
#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "common/abbreviated.h"

namespace gpuprobe {

inline constexpr size_t kMaxHostNameBytes = 128;

// The gRPC metadata that carries Submit's idempotency key on the streaming submits (Run, Check),
// whose v1 requests have no field for it.
inline constexpr char kIdempotencyKeyMetadata[] = "idempotency-key";

// INVALID_ARGUMENT naming `field` where `text` is longer than `max_bytes` or holds a control
// character.
inline absl::Status CheckPrintable(absl::string_view field, absl::string_view text,
                                   size_t max_bytes) {
  if (text.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: \"%s\" is longer than %d bytes", field, Abbreviated(text), max_bytes));
  }
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: holds the control character 0x%02x (printable text only)", field, u));
    }
  }
  return absl::OkStatus();
}

// INVALID_ARGUMENT naming `field` unless `text` is empty or a host name of at most
// kMaxHostNameBytes.
inline absl::Status CheckHostName(absl::string_view field, absl::string_view text) {
  if (text.size() > kMaxHostNameBytes) return CheckPrintable(field, text, kMaxHostNameBytes);
  for (const char c : text) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '-' && c != '_') {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: \"%s\" is not a host name (letters, digits, '.', '-', '_')", field,
                          Abbreviated(text)));
    }
  }
  return absl::OkStatus();
}

}  // namespace gpuprobe
