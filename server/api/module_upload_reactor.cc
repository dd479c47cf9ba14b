#include "server/api/module_upload_reactor.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "server/api/grpc_status.h"

namespace gpuprobe {

ModuleUploadReactor::ModuleUploadReactor(JobManager& manager, BlockingCalls& calls,
                                         std::atomic<int>& uploads,
                                         grpc::CallbackServerContext* context, std::string uploader,
                                         v1::Module* response)
    : manager_(manager),
      calls_(calls),
      uploads_(uploads),
      context_(context),
      uploader_(std::move(uploader)),
      response_(response) {}

void ModuleUploadReactor::Start() {
  if (uploads_.fetch_add(1) >= kMaxUploads) {
    uploads_.fetch_sub(1);
    Refuse(absl::ResourceExhaustedError(absl::StrFormat(
        "module: %d uploads are being received; send this one again when one has ended",
        kMaxUploads)));
    return;
  }
  counted_ = true;
  // Tells the client that the upload is being received (what a client waiting for the initial
  // metadata learns), then reads.
  StartSendInitialMetadata();
  StartRead(&chunk_);
}

void ModuleUploadReactor::Refuse(const absl::Status& status) { Finish(ToGrpcStatus(status)); }

void ModuleUploadReactor::OnDone() {
  if (counted_) uploads_.fetch_sub(1);
  delete this;
}

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
