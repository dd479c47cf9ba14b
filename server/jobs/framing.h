// Length-prefixed protobuf messages over a stream socket: a 4-byte little-endian length, then
// the serialized message. Blocking; EINTR is retried. Hand-written on purpose: the daemon polls
// the worker's socket for readiness between messages (its watchdog deadlines), and protobuf's
// delimited readers (util/delimited_message_util.h over a FileInputStream) read ahead into a
// buffer that poll(2) cannot see, so a message already read would wait for the next one. These
// read exactly one message's bytes.
//
//   RETURN_IF_ERROR(WriteFramed(fd, command));
//   RETURN_IF_ERROR(ReadFramed(fd, &report));  // UNAVAILABLE once the peer has closed
#pragma once

#include "absl/status/status.h"
#include "google/protobuf/message_lite.h"

namespace gpuprobe {

// Messages larger than this are refused on both sides (a corrupt length, not a real message): a
// run command carries the modules its job names, at most QueueLimits::max_job_module_bytes.
inline constexpr uint32_t kMaxFramedBytes = 512u << 20;

absl::Status WriteFramed(int fd, const google::protobuf::MessageLite& message);
absl::Status ReadFramed(int fd, google::protobuf::MessageLite* message);

}  // namespace gpuprobe
