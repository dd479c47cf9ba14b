// gpuprobe.v1.ProbeService on gRPC's callback API: requests go to the job manager, which
// validates them completely before anything is stored or queued; job streams are reactors
// watching the manager. Every call that waits on the job store runs on the service's own
// bounded threads (BlockingCalls), never on a gRPC callback thread.
//
//   ProbeService service(manager, AccessControl(), "0.1.0");
//   builder.RegisterService(&service);
#pragma once

#include <atomic>
#include <string>

#include "gpuprobe/v1/probe.grpc.pb.h"
#include "server/api/access_control.h"
#include "server/api/blocking_calls.h"
#include "server/api/job_stream_reactor.h"
#include "server/jobs/job_manager.h"

namespace gpuprobe {

class ProbeService final : public v1::ProbeService::CallbackService {
 public:
  ProbeService(JobManager& manager, AccessControl access, std::string version);

  grpc::ServerWriteReactor<v1::JobEvent>* Run(grpc::CallbackServerContext* context,
                                              const v1::SweepRequest* request) override;
  grpc::ServerWriteReactor<v1::JobEvent>* Check(grpc::CallbackServerContext* context,
                                                const v1::CheckRequest* request) override;
  grpc::ServerUnaryReactor* Submit(grpc::CallbackServerContext* context,
                                   const v1::SubmitRequest* request, v1::Job* response) override;
  grpc::ServerWriteReactor<v1::JobEvent>* Watch(grpc::CallbackServerContext* context,
                                                const v1::WatchRequest* request) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* context,
                                   const v1::GetJobRequest* request, v1::Job* response) override;
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* context,
                                     const v1::ListJobsRequest* request,
                                     v1::ListJobsResponse* response) override;
  grpc::ServerUnaryReactor* CancelJob(grpc::CallbackServerContext* context,
                                      const v1::CancelJobRequest* request,
                                      v1::Job* response) override;
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* context,
                                          const v1::GetServerInfoRequest* request,
                                          v1::ServerInfo* response) override;
  grpc::ServerUnaryReactor* ListProbes(grpc::CallbackServerContext* context,
                                       const v1::ListProbesRequest* request,
                                       v1::ListProbesResponse* response) override;
  grpc::ServerUnaryReactor* ListArtifacts(grpc::CallbackServerContext* context,
                                          const v1::ListArtifactsRequest* request,
                                          v1::ListArtifactsResponse* response) override;
  grpc::ServerWriteReactor<v1::ArtifactChunk>* GetArtifact(
      grpc::CallbackServerContext* context, const v1::GetArtifactRequest* request) override;
  grpc::ServerUnaryReactor* CompareJobs(grpc::CallbackServerContext* context,
                                        const v1::CompareJobsRequest* request,
                                        v1::CompareJobsResponse* response) override;
  grpc::ServerReadReactor<v1::ModuleChunk>* UploadModule(grpc::CallbackServerContext* context,
                                                         v1::Module* response) override;
  grpc::ServerUnaryReactor* GetModule(grpc::CallbackServerContext* context,
                                      const v1::GetModuleRequest* request,
                                      v1::Module* response) override;

 private:
  absl::StatusOr<Caller> Authorize(grpc::CallbackServerContext* context, Role needed,
                                   const std::string& what) const;
  // Authorizes, then (on calls_) submits, and streams the job's events or the refusal.
  JobStreamReactor* SubmitAndStream(grpc::CallbackServerContext* context, v1::SubmitRequest request,
                                    const std::string& what);

  JobManager& manager_;
  const AccessControl access_;
  const std::string version_;
  // Module uploads being received (ModuleUploadReactor bounds them).
  std::atomic<int> uploads_{0};
  // Calls that wait on the store: 8 at a time, 1024 more waiting; beyond, RESOURCE_EXHAUSTED.
  // Last, so that it runs what waits (and joins) before the rest goes.
  BlockingCalls calls_{8, 1024};
};

}  // namespace gpuprobe
