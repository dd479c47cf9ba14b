// gpuprobe.v1.ProbeService on gRPC's callback API: requests go to the job manager, which
// validates them completely before anything is stored or queued; job streams are reactors
// watching the manager.
//
//   ProbeService service(manager, AccessControl(), "0.1.0");
//   builder.RegisterService(&service);
#pragma once

#include <string>

#include "gpuprobe/v1/probe.grpc.pb.h"
#include "server/api/access_control.h"
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

 private:
  absl::StatusOr<Caller> Authorize(grpc::CallbackServerContext* context, Role needed,
                                   const std::string& what) const;
  // Authorizes, submits and returns the id to stream, or the refusal.
  absl::StatusOr<std::string> SubmitForStream(grpc::CallbackServerContext* context,
                                              v1::SubmitRequest request, const std::string& what);

  JobManager& manager_;
  const AccessControl access_;
  const std::string version_;
};

}  // namespace gpuprobe
