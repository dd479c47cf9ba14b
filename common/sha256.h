// SHA-256 as 64 lower-case hex digits (OpenSSL's libcrypto): the id of a stored module and the
// hash of a kernel's machine code.
//
//   const std::string id = Sha256Hex(bytes);
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace gpuprobe {

std::string Sha256Hex(absl::string_view bytes);

// Whether `text` is 64 lower-case hex digits, as Sha256Hex writes them.
bool IsSha256Hex(absl::string_view text);

}  // namespace gpuprobe
