// Counts every gRPC call the daemon answers and times it (gpuprobe_grpc_requests_total{method,
// code}, gpuprobe_grpc_request_duration_seconds{method}: server/metrics/metrics_registry.h), as
// a server interceptor, so that no rpc handler has to.
//
//   std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> f;
//   f.push_back(std::make_unique<GrpcRequestMetrics>());
//   builder.experimental().SetInterceptorCreators(std::move(f));
#pragma once

#include "grpcpp/support/server_interceptor.h"

namespace gpuprobe {

class GrpcRequestMetrics final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;
};

}  // namespace gpuprobe
