#include "server/api/module_upload_reactor.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "server/api/grpc_status.h"

namespace gpuprobe {

ModuleUploadReactor::ModuleUploadReactor(JobManager& manager, BlockingCalls& calls,
                                         grpc::CallbackServerContext* context, std::string uploader,
                                         v1::Module* response)
    : manager_(manager),
      calls_(calls),
      context_(context),
      uploader_(std::move(uploader)),
      response_(response) {}

void ModuleUploadReactor::Refuse(const absl::Status& status) { Finish(ToGrpcStatus(status)); }

void ModuleUploadReactor::OnReadDone(bool ok) {
  if (!ok) {
    // The client sent it all, or the call ended.
    if (context_->IsCancelled()) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the upload was cancelled"));
      return;
    }
    if (!calls_.Schedule([this] {
          absl::StatusOr<v1::Module> stored = manager_.StoreModule(bytes_, uploader_);
          if (stored.ok()) *response_ = *std::move(stored);
          Finish(ToGrpcStatus(stored.status()));
        })) {
      Finish(ToGrpcStatus(calls_.Busy()));
    }
    return;
  }
  const int64_t size = static_cast<int64_t>(bytes_.size() + chunk_.data().size());
  if (size > manager_.max_module_bytes()) {
    Finish(ToGrpcStatus(absl::ResourceExhaustedError(
        absl::StrFormat("module: more than the %d bytes a module may have (--max-module-bytes)",
                        manager_.max_module_bytes()))));
    return;
  }
  bytes_ += chunk_.data();
  StartRead(&chunk_);
}

}  // namespace gpuprobe
