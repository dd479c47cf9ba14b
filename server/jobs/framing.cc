#include "server/jobs/framing.h"

#include <errno.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace gpuprobe {
namespace {

absl::Status WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError(absl::StrCat("write: ", std::strerror(errno)));
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status ReadAll(int fd, char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return absl::UnavailableError("the peer closed the connection");
    if (n < 0) return absl::UnavailableError(absl::StrCat("read: ", std::strerror(errno)));
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFramed(int fd, const google::protobuf::MessageLite& message) {
  const std::string bytes = message.SerializeAsString();
  if (bytes.size() > kMaxFramedBytes) return absl::ResourceExhaustedError("message too large");
  const uint32_t size = static_cast<uint32_t>(bytes.size());
  const unsigned char header[4] = {
      static_cast<unsigned char>(size), static_cast<unsigned char>(size >> 8),
      static_cast<unsigned char>(size >> 16), static_cast<unsigned char>(size >> 24)};
  if (absl::Status s = WriteAll(fd, reinterpret_cast<const char*>(header), 4); !s.ok()) return s;
  return WriteAll(fd, bytes.data(), bytes.size());
}

absl::Status ReadFramed(int fd, google::protobuf::MessageLite* message) {
  unsigned char header[4];
  if (absl::Status s = ReadAll(fd, reinterpret_cast<char*>(header), 4); !s.ok()) return s;
  const uint32_t size =
      header[0] | (header[1] << 8) | (header[2] << 16) | (static_cast<uint32_t>(header[3]) << 24);
  if (size > kMaxFramedBytes) return absl::DataLossError("framed message length is corrupt");
  std::string bytes(size, '\0');
  if (absl::Status s = ReadAll(fd, bytes.data(), size); !s.ok()) return s;
  if (!message->ParseFromString(bytes)) return absl::DataLossError("framed message is corrupt");
  return absl::OkStatus();
}

}  // namespace gpuprobe
