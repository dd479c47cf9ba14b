#include "server/api/grpc_status.h"

#include <string>

namespace gpuprobe {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

}  // namespace gpuprobe
