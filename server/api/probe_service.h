// gpuprobe.v1.ProbeService on gRPC's callback API: translates requests to engine types at
// the edge, validates them before anything is queued, and hands jobs to the device worker.
//
//   ProbeService service(worker, SweepLimits{}, "0.1.0");
//   builder.RegisterService(&service);
#pragma once

#include <atomic>
#include <string>

#include "gpuprobe/v1/probe.grpc.pb.h"
#include "server/jobs/device_worker.h"
#include "server/probe/sweep_spec.h"

namespace gpuprobe {

class ProbeService final : public v1::ProbeService::CallbackService {
 public:
  ProbeService(DeviceWorker& worker, SweepLimits limits, std::string version);

  grpc::ServerWriteReactor<v1::JobEvent>* Run(grpc::CallbackServerContext* context,
                                              const v1::SweepRequest* request) override;
  grpc::ServerWriteReactor<v1::JobEvent>* Check(grpc::CallbackServerContext* context,
                                                const v1::CheckRequest* request) override;
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* context,
                                          const v1::GetServerInfoRequest* request,
                                          v1::ServerInfo* response) override;

 private:
  // Every check that needs no device (fields, limits, the backend's variants, geometry and
  // memory), then a job ready to queue.
  absl::StatusOr<std::shared_ptr<Job>> MakeJob(JobKind kind,
                                               absl::StatusOr<SweepOptions> options);

  DeviceWorker& worker_;
  const SweepLimits limits_;
  const std::string version_;
  std::atomic<int64_t> next_job_number_{1};
};

}  // namespace gpuprobe
