#include "server/api/grpc_request_metrics.h"

#include <string>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "server/metrics/metrics_registry.h"

namespace gpuprobe {
namespace {

// The status code's name as gRPC spells it (OK, NOT_FOUND, ...): absl's codes are gRPC's.
std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

// One call: the clock starts when the call arrives, the sample is taken when its status goes
// out.
class CallMetrics final : public grpc::experimental::Interceptor {
 public:
  explicit CallMetrics(const char* method) : method_(method), start_(absl::Now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      DaemonMetrics().Add(
          kGrpcRequests,
          {{"method", method_}, {"code", CodeName(methods->GetSendStatus().error_code())}});
      DaemonMetrics().Observe(kGrpcRequestDuration, {{"method", method_}},
                              absl::ToDoubleSeconds(absl::Now() - start_));
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  const absl::Time start_;
};

}  // namespace

grpc::experimental::Interceptor* GrpcRequestMetrics::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new CallMetrics(info->method() != nullptr ? info->method() : "unknown");
}

}  // namespace gpuprobe
