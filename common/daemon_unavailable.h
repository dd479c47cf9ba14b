// UNAVAILABLE means two things to a gRPC client: no daemon answered (the transport's status), or
// the daemon answered that it cannot serve now (its job store is away). The daemon marks its own
// by beginning the message with kDaemonUnavailablePrefix, so that a client never tells a user
// that a daemon which answered cannot be reached.
//
//   grpc::Status s = ToGrpcStatus(absl::UnavailableError("postgresql: ..."));  // marked
//   if (IsDaemonUnavailable(s.error_message())) ...  // the daemon's store, not the network
#pragma once

#include <string>
#include <string_view>

namespace gpuprobe {

inline constexpr std::string_view kDaemonUnavailablePrefix = "gpuprobed cannot serve now: ";

inline bool IsDaemonUnavailable(std::string_view message) {
  return message.starts_with(kDaemonUnavailablePrefix);
}

inline std::string MarkDaemonUnavailable(std::string_view message) {
  if (IsDaemonUnavailable(message)) return std::string(message);
  return std::string(kDaemonUnavailablePrefix).append(message);
}

}  // namespace gpuprobe
