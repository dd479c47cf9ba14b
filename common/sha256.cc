#include "common/sha256.h"

#include <openssl/evp.h>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"

namespace gpuprobe {

std::string Sha256Hex(absl::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), length));
}

bool IsSha256Hex(absl::string_view text) {
  if (text.size() != 64) return false;
  for (const char c : text) {
    if (!absl::ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

}  // namespace gpuprobe
