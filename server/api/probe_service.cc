#include "server/api/probe_service.h"

#include "server/api/grpc_status.h"
#include "server/api/job_stream_reactor.h"
#include "server/jobs/proto_mapping.h"

namespace gpuprobe {
namespace {

// Finishes a unary call with the status of `result`, copying its value into `response`.
template <typename T>
grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                 absl::StatusOr<T> result, T* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (result.ok()) *response = *std::move(result);
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

}  // namespace

ProbeService::ProbeService(JobManager& manager, std::string version)
    : manager_(manager), version_(std::move(version)) {}

absl::StatusOr<std::string> ProbeService::SubmitForStream(grpc::CallbackServerContext* context,
                                                          v1::SubmitRequest request) {
  absl::StatusOr<v1::Job> job = manager_.Submit(std::move(request), context->peer());
  if (!job.ok()) return job.status();
  return job->id();
}

grpc::ServerWriteReactor<v1::JobEvent>* ProbeService::Run(grpc::CallbackServerContext* context,
                                                         const v1::SweepRequest* request) {
  v1::SubmitRequest submit;
  *submit.mutable_sweep() = *request;
  return new JobStreamReactor(manager_, SubmitForStream(context, std::move(submit)));
}

grpc::ServerWriteReactor<v1::JobEvent>* ProbeService::Check(grpc::CallbackServerContext* context,
                                                           const v1::CheckRequest* request) {
  v1::SubmitRequest submit;
  *submit.mutable_check() = *request;
  if (request->variants().empty()) {
    // "Every variant" means every variant this backend implements.
    for (KernelVariant v : {KernelVariant::kPerSlot, KernelVariant::kUnion, KernelVariant::kFloor}) {
      if (manager_.backend().CheckVariant(v).ok()) {
        submit.mutable_check()->add_variants(VariantToProto(v));
      }
    }
  }
  return new JobStreamReactor(manager_, SubmitForStream(context, std::move(submit)));
}

grpc::ServerUnaryReactor* ProbeService::Submit(grpc::CallbackServerContext* context,
                                               const v1::SubmitRequest* request,
                                               v1::Job* response) {
  return Answer(context, manager_.Submit(*request, context->peer()), response);
}

grpc::ServerWriteReactor<v1::JobEvent>* ProbeService::Watch(grpc::CallbackServerContext*,
                                                           const v1::WatchRequest* request) {
  return new JobStreamReactor(manager_, request->job_id());
}

grpc::ServerUnaryReactor* ProbeService::GetJob(grpc::CallbackServerContext* context,
                                               const v1::GetJobRequest* request,
                                               v1::Job* response) {
  return Answer(context, manager_.Get(request->job_id()), response);
}

grpc::ServerUnaryReactor* ProbeService::ListJobs(grpc::CallbackServerContext* context,
                                                 const v1::ListJobsRequest* request,
                                                 v1::ListJobsResponse* response) {
  return Answer(context, manager_.List(*request), response);
}

grpc::ServerUnaryReactor* ProbeService::CancelJob(grpc::CallbackServerContext* context,
                                                  const v1::CancelJobRequest* request,
                                                  v1::Job* response) {
  return Answer(context, manager_.Cancel(request->job_id()), response);
}

grpc::ServerUnaryReactor* ProbeService::GetServerInfo(grpc::CallbackServerContext* context,
                                                      const v1::GetServerInfoRequest*,
                                                      v1::ServerInfo* response) {
  const Backend& backend = manager_.backend();
  response->set_version(version_);
  response->set_backend(backend.Name());
  response->set_device(backend.Description());
  response->set_device_memory_bytes(backend.MemoryCapacityBytes());
  response->set_queue_depth(static_cast<uint32_t>(manager_.QueueDepth()));
  *response->mutable_details() = DeviceDetailsToProto(backend.Details());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace gpuprobe
