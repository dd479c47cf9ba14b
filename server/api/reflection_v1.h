// gRPC server reflection v1 (grpc.reflection.v1.ServerReflection), beside the v1alpha that
// Debian's gRPC 1.51 serves through its plugin: clients of newer gRPC (grpcurl, Postman, ...)
// ask for v1 first. It answers from this binary's generated descriptors, as v1alpha does.
//
//   ReflectionV1 reflection({"gpuprobe.v1.ProbeService", "grpc.health.v1.Health", ...});
//   builder.RegisterService(&reflection);
#pragma once

#include <string>
#include <vector>

#include "grpc/reflection/v1/reflection.grpc.pb.h"

namespace gpuprobe {

class ReflectionV1 final : public grpc::reflection::v1::ServerReflection::Service {
 public:
  // `services`: the full names list_services answers.
  explicit ReflectionV1(std::vector<std::string> services) : services_(std::move(services)) {}

  grpc::Status ServerReflectionInfo(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<grpc::reflection::v1::ServerReflectionResponse,
                               grpc::reflection::v1::ServerReflectionRequest>* stream) override;

 private:
  const std::vector<std::string> services_;
};

}  // namespace gpuprobe
