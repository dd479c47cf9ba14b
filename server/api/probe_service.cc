#include "server/api/probe_service.h"

#include <atomic>
#include <optional>

#include "absl/strings/str_format.h"
#include "common/identifiers.h"
#include "common/status_macros.h"
#include "server/api/grpc_status.h"
#include "server/api/job_stream_reactor.h"
#include "server/api/module_upload_reactor.h"
#include "server/jobs/job_comparison.h"
#include "server/probes/moe_union/moe_union_mapping.h"
#include "server/store/moe_union_rows.h"

namespace gpuprobe {
namespace {

// Finishes a unary call with the status of `result`, copying its value into `response`.
template <typename T>
grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context, absl::StatusOr<T> result,
                                 T* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (result.ok()) *response = *std::move(result);
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

// Answers a unary call with what `call` returns (an absl::StatusOr<T>), run on `calls`.
template <typename T, typename Call>
grpc::ServerUnaryReactor* AnswerLater(grpc::CallbackServerContext* context, BlockingCalls& calls,
                                      T* response, Call call) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const bool scheduled = calls.Schedule([reactor, response, call = std::move(call)]() mutable {
    absl::StatusOr<T> result = call();
    if (result.ok()) *response = *std::move(result);
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  if (!scheduled) reactor->Finish(ToGrpcStatus(calls.Busy()));
  return reactor;
}

// Streams one artifact in chunks of at most 1 MiB, one write in flight at a time. Every read of
// the file runs on the blocking-call pool, never on a gRPC callback thread; a cancelled call
// stops at the next read, and Finish is called exactly once, whichever way the stream ends.
class ArtifactReactor final : public grpc::ServerWriteReactor<v1::ArtifactChunk> {
 public:
  explicit ArtifactReactor(BlockingCalls& calls) : calls_(calls) {}

  // Streams what `reader` reads once it is open (its error ends the stream); on a pool thread,
  // or on any thread with an error.
  void Start(absl::StatusOr<std::unique_ptr<ArtifactReader>> reader) {
    if (!reader.ok()) {
      FinishOnce(ToGrpcStatus(reader.status()));
      return;
    }
    reader_ = *std::move(reader);
    ReadNext();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "stream closed by the client"));
      return;
    }
    if (!calls_.Schedule([this] { ReadNext(); })) FinishOnce(ToGrpcStatus(calls_.Busy()));
  }
  void OnCancel() override { cancelled_ = true; }
  void OnDone() override { delete this; }

 private:
  // On a pool thread.
  void ReadNext() {
    if (cancelled_) {
      FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client"));
      return;
    }
    absl::StatusOr<std::string> bytes = reader_->Next(size_t{1} << 20);
    if (!bytes.ok()) {
      FinishOnce(ToGrpcStatus(bytes.status()));
      return;
    }
    if (bytes->empty()) {
      FinishOnce(grpc::Status::OK);
      return;
    }
    chunk_.set_data(*std::move(bytes));
    StartWrite(&chunk_);
  }

  void FinishOnce(const grpc::Status& status) {
    if (!finished_.exchange(true)) Finish(status);
  }

  BlockingCalls& calls_;
  std::unique_ptr<ArtifactReader> reader_;
  v1::ArtifactChunk chunk_;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> finished_{false};
};

// The job to stream: known at once.
absl::AnyInvocable<absl::StatusOr<std::string>() &&> Known(absl::StatusOr<std::string> job_id) {
  return [job_id = std::move(job_id)]() mutable { return std::move(job_id); };
}

// The role a submit needs: `kernel` for a job of a probe that runs the client's GPU code.
Role SubmitRole(const ProbeRegistry& probes, const v1::SubmitRequest& request) {
  const Probe* probe = request.has_probe() ? probes.Find(request.probe().probe()) : nullptr;
  return probe != nullptr && probe->Info().client_code() ? Role::kKernel : Role::kSubmit;
}

}  // namespace

ProbeService::ProbeService(JobManager& manager, AccessControl access, std::string version)
    : manager_(manager), access_(std::move(access)), version_(std::move(version)) {}

absl::StatusOr<Caller> ProbeService::Authorize(grpc::CallbackServerContext* context, Role needed,
                                               const std::string& what) const {
  return access_.Authorize(context->client_metadata(), context->peer(), needed, what);
}

JobStreamReactor* ProbeService::SubmitAndStream(grpc::CallbackServerContext* context,
                                                v1::SubmitRequest request,
                                                const std::string& what) {
  // Run and Check take Submit's idempotency key as metadata (their requests are v1's): a retry
  // whose first call's accepted event never arrived streams the job that call created.
  const auto key = context->client_metadata().find(kIdempotencyKeyMetadata);
  if (key != context->client_metadata().end()) {
    request.set_idempotency_key(std::string(key->second.data(), key->second.size()));
  }
  absl::StatusOr<Caller> caller = Authorize(context, SubmitRole(manager_.probes(), request), what);
  if (!caller.ok()) {
    return JobStreamReactor::Start(manager_, calls_, Known(caller.status()),
                                   /*all_attempts=*/false, /*v1_rows=*/true);
  }
  return JobStreamReactor::Start(
      manager_, calls_,
      [this, request = std::move(request),
       caller = *std::move(caller)]() mutable -> absl::StatusOr<std::string> {
        ASSIGN_OR_RETURN(v1::Job job,
                         manager_.Submit(std::move(request), caller.name, caller.key_scope));
        return job.id();
      },
      /*all_attempts=*/false, /*v1_rows=*/true);
}

grpc::ServerWriteReactor<v1::JobEvent>* ProbeService::Run(grpc::CallbackServerContext* context,
                                                          const v1::SweepRequest* request) {
  v1::SubmitRequest submit;
  *submit.mutable_sweep() = *request;
  return SubmitAndStream(context, std::move(submit), "Run");
}

grpc::ServerWriteReactor<v1::JobEvent>* ProbeService::Check(grpc::CallbackServerContext* context,
                                                            const v1::CheckRequest* request) {
  v1::SubmitRequest submit;
  *submit.mutable_check() = *request;
  if (request->variants().empty()) {
    // "Every variant" means every variant this backend implements.
    for (KernelVariant v : {KernelVariant::kPerSlot, KernelVariant::kUnion, KernelVariant::kFloor,
                            KernelVariant::kFloorDistinct}) {
      if (CheckMoeVariant(manager_.backend().Name(), v).ok()) {
        submit.mutable_check()->add_variants(VariantToProto(v));
      }
    }
  }
  return SubmitAndStream(context, std::move(submit), "Check");
}

grpc::ServerUnaryReactor* ProbeService::Submit(grpc::CallbackServerContext* context,
                                               const v1::SubmitRequest* request,
                                               v1::Job* response) {
  absl::StatusOr<Caller> caller =
      Authorize(context, SubmitRole(manager_.probes(), *request), "Submit");
  if (!caller.ok()) return Answer<v1::Job>(context, caller.status(), response);
  return AnswerLater(context, calls_, response, [this, request, caller = *std::move(caller)] {
    return manager_.Submit(*request, caller.name, caller.key_scope);
  });
}

grpc::ServerWriteReactor<v1::JobEvent>* ProbeService::Watch(grpc::CallbackServerContext* context,
                                                            const v1::WatchRequest* request) {
  absl::StatusOr<Caller> caller = Authorize(context, Role::kRead, "Watch");
  if (!caller.ok()) {
    return JobStreamReactor::Start(manager_, calls_, Known(caller.status()),
                                   /*all_attempts=*/false, /*v1_rows=*/false);
  }
  return JobStreamReactor::Start(manager_, calls_, Known(request->job_id()),
                                 request->all_attempts(), /*v1_rows=*/!request->results());
}

grpc::ServerUnaryReactor* ProbeService::GetJob(grpc::CallbackServerContext* context,
                                               const v1::GetJobRequest* request,
                                               v1::Job* response) {
  absl::StatusOr<Caller> caller = Authorize(context, Role::kRead, "GetJob");
  if (!caller.ok()) return Answer<v1::Job>(context, caller.status(), response);
  return AnswerLater(context, calls_, response,
                     [this, request] { return manager_.Get(request->job_id()); });
}

grpc::ServerUnaryReactor* ProbeService::ListJobs(grpc::CallbackServerContext* context,
                                                 const v1::ListJobsRequest* request,
                                                 v1::ListJobsResponse* response) {
  absl::StatusOr<Caller> caller = Authorize(context, Role::kRead, "ListJobs");
  if (!caller.ok()) return Answer<v1::ListJobsResponse>(context, caller.status(), response);
  return AnswerLater(context, calls_, response,
                     [this, request] { return manager_.List(*request); });
}

grpc::ServerUnaryReactor* ProbeService::CancelJob(grpc::CallbackServerContext* context,
                                                  const v1::CancelJobRequest* request,
                                                  v1::Job* response) {
  absl::StatusOr<Caller> caller = Authorize(context, Role::kSubmit, "CancelJob");
  if (!caller.ok()) return Answer<v1::Job>(context, caller.status(), response);
  return AnswerLater(
      context, calls_, response,
      [this, request, caller = *std::move(caller)]() -> absl::StatusOr<v1::Job> {
        if (caller.role != Role::kAdmin) {
          absl::StatusOr<v1::Job> job = manager_.Get(request->job_id());
          if (job.ok() && job->submitter() != caller.name) {
            return absl::PermissionDeniedError(absl::StrFormat(
                "CancelJob: \"%s\" may cancel only its own jobs; %s was submitted by \"%s\"",
                caller.name, job->id(), job->submitter()));
          }
        }
        return manager_.Cancel(request->job_id());
      });
}

grpc::ServerUnaryReactor* ProbeService::GetServerInfo(grpc::CallbackServerContext* context,
                                                      const v1::GetServerInfoRequest*,
                                                      v1::ServerInfo* response) {
  absl::StatusOr<Caller> caller = Authorize(context, Role::kRead, "GetServerInfo");
  if (!caller.ok()) return Answer<v1::ServerInfo>(context, caller.status(), response);
  return AnswerLater(context, calls_, response, [this] { return manager_.Info(version_); });
}

grpc::ServerUnaryReactor* ProbeService::ListProbes(grpc::CallbackServerContext* context,
                                                   const v1::ListProbesRequest*,
                                                   v1::ListProbesResponse* response) {
  absl::StatusOr<Caller> caller = Authorize(context, Role::kRead, "ListProbes");
  if (!caller.ok()) return Answer<v1::ListProbesResponse>(context, caller.status(), response);
  v1::ListProbesResponse list;
  for (const Probe* probe : manager_.probes().All()) *list.add_probes() = probe->Info();
  return Answer<v1::ListProbesResponse>(context, std::move(list), response);
}

grpc::ServerUnaryReactor* ProbeService::ListArtifacts(grpc::CallbackServerContext* context,
                                                      const v1::ListArtifactsRequest* request,
                                                      v1::ListArtifactsResponse* response) {
  absl::StatusOr<Caller> caller = Authorize(context, Role::kRead, "ListArtifacts");
  if (!caller.ok()) return Answer<v1::ListArtifactsResponse>(context, caller.status(), response);
  return AnswerLater(context, calls_, response,
                     [this, request]() -> absl::StatusOr<v1::ListArtifactsResponse> {
                       ASSIGN_OR_RETURN(std::vector<v1::Artifact> artifacts,
                                        manager_.ListArtifacts(request->job_id()));
                       v1::ListArtifactsResponse list;
                       for (v1::Artifact& a : artifacts) *list.add_artifacts() = std::move(a);
                       return list;
                     });
}

grpc::ServerWriteReactor<v1::ArtifactChunk>* ProbeService::GetArtifact(
    grpc::CallbackServerContext* context, const v1::GetArtifactRequest* request) {
  absl::StatusOr<Caller> caller = Authorize(context, Role::kRead, "GetArtifact");
  auto* reactor = new ArtifactReactor(calls_);
  if (!caller.ok()) {
    reactor->Start(caller.status());
    return reactor;
  }
  if (!calls_.Schedule([this, reactor, request] {
        reactor->Start(manager_.OpenArtifact(request->job_id(), request->name()));
      })) {
    reactor->Start(calls_.Busy());
  }
  return reactor;
}

grpc::ServerUnaryReactor* ProbeService::CompareJobs(grpc::CallbackServerContext* context,
                                                    const v1::CompareJobsRequest* request,
                                                    v1::CompareJobsResponse* response) {
  absl::StatusOr<Caller> caller = Authorize(context, Role::kRead, "CompareJobs");
  if (!caller.ok()) return Answer<v1::CompareJobsResponse>(context, caller.status(), response);
  return AnswerLater(context, calls_, response,
                     [this, request]() -> absl::StatusOr<v1::CompareJobsResponse> {
                       ASSIGN_OR_RETURN(v1::CompareJobsResponse compared,
                                        gpuprobe::CompareJobs(manager_, *request));
                       // v1 clients read a moe-union arm from `arm`.
                       for (v1::ArmComparison& arm : *compared.mutable_arms()) {
                         if (std::optional<v1::Arm> moe = ArmOfAxes(arm.axes())) {
                           *arm.mutable_arm() = *moe;
                         }
                       }
                       return compared;
                     });
}

grpc::ServerReadReactor<v1::ModuleChunk>* ProbeService::UploadModule(
    grpc::CallbackServerContext* context, v1::Module* response) {
  absl::StatusOr<Caller> caller = Authorize(context, Role::kKernel, "UploadModule");
  auto* reactor = new ModuleUploadReactor(manager_, calls_, uploads_, context,
                                          caller.ok() ? caller->name : "", response);
  if (caller.ok()) {
    reactor->Start();
  } else {
    reactor->Refuse(caller.status());
  }
  return reactor;
}

grpc::ServerUnaryReactor* ProbeService::GetModule(grpc::CallbackServerContext* context,
                                                  const v1::GetModuleRequest* request,
                                                  v1::Module* response) {
  absl::StatusOr<Caller> caller = Authorize(context, Role::kRead, "GetModule");
  if (!caller.ok()) return Answer<v1::Module>(context, caller.status(), response);
  return AnswerLater(context, calls_, response,
                     [this, request] { return manager_.GetModule(request->id()); });
}

}  // namespace gpuprobe
