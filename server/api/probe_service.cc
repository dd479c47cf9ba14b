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

absl::StatusOr<std::shared_ptr<Job>> ProbeService::MakeJob(
    JobKind kind, absl::StatusOr<SweepOptions> options) {
  if (!options.ok()) return options.status();
  ASSIGN_OR_RETURN(SweepSpec spec, ResolveSweep(*options, limits_));
  RETURN_IF_ERROR(CheckFitsBackend(spec, worker_.backend()));
  auto job = std::make_shared<Job>();
  // Ids stay unique across restarts of the daemon: start second, then a counter.
  static const int64_t kStartSecond = absl::ToUnixSeconds(absl::Now());
  job->id = absl::StrFormat("%d-%d", kStartSecond, next_job_number_.fetch_add(1));
  job->kind = kind;
  job->spec = std::move(spec);
  return job;
}

grpc::ServerWriteReactor<v1::JobEvent>* ProbeService::Run(grpc::CallbackServerContext*,
                                                         const v1::SweepRequest* request) {
  return new RunReactor(worker_, MakeJob(JobKind::kSweep, SweepOptionsFromProto(*request)));
}

grpc::ServerWriteReactor<v1::JobEvent>* ProbeService::Check(grpc::CallbackServerContext*,
                                                           const v1::CheckRequest* request) {
  absl::StatusOr<SweepOptions> options = CheckOptionsFromProto(*request);
  if (options.ok() && request->variants().empty()) {
    // "Every variant" means every variant this backend implements.
    std::erase_if(options->variants,
                  [&](KernelVariant v) { return !worker_.backend().CheckVariant(v).ok(); });
  }
  absl::StatusOr<std::shared_ptr<Job>> job = MakeJob(JobKind::kCheck, std::move(options));
  if (job.ok()) (*job)->dump_dir = request->dump_dir();
  return new RunReactor(worker_, std::move(job));
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
  *response->mutable_details() = DeviceDetailsToProto(backend.Details());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace gpuprobe
