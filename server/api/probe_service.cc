#include "server/api/probe_service.h"

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/api/run_reactor.h"
#include "server/jobs/proto_mapping.h"
#include "server/probe/sweep_runner.h"

namespace gpuprobe {

ProbeService::ProbeService(DeviceWorker& worker, SweepLimits limits, std::string version)
    : worker_(worker), limits_(limits), version_(std::move(version)) {}

absl::StatusOr<SweepSpec> ProbeService::Validate(const v1::SweepRequest& request) const {
  ASSIGN_OR_RETURN(SweepOptions options, SweepOptionsFromProto(request));
  ASSIGN_OR_RETURN(SweepSpec spec, ResolveSweep(options, limits_));
  RETURN_IF_ERROR(CheckFitsBackend(spec, worker_.backend()));
  return spec;
}

grpc::ServerWriteReactor<v1::JobEvent>* ProbeService::Run(grpc::CallbackServerContext*,
                                                         const v1::SweepRequest* request) {
  // Ids stay unique across restarts of the daemon: start second, then a counter.
  static const int64_t kStartSecond = absl::ToUnixSeconds(absl::Now());
  const std::string job_id =
      absl::StrFormat("%d-%d", kStartSecond, next_job_number_.fetch_add(1));
  return new RunReactor(worker_, Validate(*request), job_id);
}

grpc::ServerUnaryReactor* ProbeService::GetServerInfo(grpc::CallbackServerContext* context,
                                                      const v1::GetServerInfoRequest*,
                                                      v1::ServerInfo* response) {
  const Backend& backend = worker_.backend();
  response->set_version(version_);
  response->set_backend(backend.Name());
  response->set_device(backend.Description());
  response->set_device_memory_bytes(backend.MemoryCapacityBytes());
  response->set_queue_depth(worker_.QueueDepth());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace gpuprobe
