#include "server/api/grpc_status.h"

#include <string>

#include "common/daemon_unavailable.h"

namespace gpuprobe {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  const auto code = static_cast<grpc::StatusCode>(status.code());
  if (code == grpc::StatusCode::UNAVAILABLE) {
    return grpc::Status(code, MarkDaemonUnavailable(std::string(status.message())));
  }
  return grpc::Status(code, std::string(status.message()));
}

}  // namespace gpuprobe
