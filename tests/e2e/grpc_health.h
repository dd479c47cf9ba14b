// grpc.health.v1's answer of a gpuprobed, for the end-to-end tests.
#pragma once

#include <chrono>
#include <string>

#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"

namespace gpuprobe::testing_support {

// The daemon at `server`'s health (plaintext), overall ("") or of one service; a failed check
// is a test failure.
inline grpc::health::v1::HealthCheckResponse::ServingStatus CheckHealth(
    const std::string& server, const std::string& service = "") {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse health;
  const grpc::Status s = grpc::health::v1::Health::NewStub(
                             grpc::CreateChannel(server, grpc::InsecureChannelCredentials()))
                             ->Check(&context, request, &health);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return health.status();
}

}  // namespace gpuprobe::testing_support
