// The one place where absl::Status becomes grpc::Status (the codes share their numbering). The
// daemon's own UNAVAILABLE (its job store is away) is marked as such (common/daemon_unavailable.h).
//
//   return ToGrpcStatus(absl::InvalidArgumentError("hidden: 500 ..."));
#pragma once

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace gpuprobe {

grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace gpuprobe
