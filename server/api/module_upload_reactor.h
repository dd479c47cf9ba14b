// UploadModule's stream: the client's chunks read into one buffer, the module refused at once
// (RESOURCE_EXHAUSTED) when it passes the daemon's size limit, then, once the client has sent
// it all, checked and stored on a pool thread (JobManager::StoreModule), never on a gRPC
// callback thread. At most kMaxUploads uploads are read at once, so their buffers take at most
// kMaxUploads x --max-module-bytes of memory; another is refused, saying so.
//
//   auto* reactor = new ModuleUploadReactor(manager, calls, uploads, context, caller.name,
//                                           response);
//   reactor->Start();   // or reactor->Refuse(status)
//   return reactor;
#pragma once

#include <atomic>
#include <string>

#include "absl/status/status.h"
#include "gpuprobe/v1/module.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/api/blocking_calls.h"
#include "server/jobs/job_manager.h"

namespace gpuprobe {

class ModuleUploadReactor final : public grpc::ServerReadReactor<v1::ModuleChunk> {
 public:
  static constexpr int kMaxUploads = 4;

  // `uploads`: the uploads being read now, the daemon's count for all of them.
  ModuleUploadReactor(JobManager& manager, BlockingCalls& calls, std::atomic<int>& uploads,
                      grpc::CallbackServerContext* context, std::string uploader,
                      v1::Module* response);

  // Reads the first chunk, or refuses the upload where kMaxUploads are being read.
  void Start();
  // Ends the call with `status` unread (a caller not allowed to upload).
  void Refuse(const absl::Status& status);

  void OnReadDone(bool ok) override;
  void OnDone() override;

 private:
  JobManager& manager_;
  BlockingCalls& calls_;
  std::atomic<int>& uploads_;
  bool counted_ = false;  // this upload is one of `uploads_`
  grpc::CallbackServerContext* const context_;
  const std::string uploader_;
  v1::Module* const response_;
  v1::ModuleChunk chunk_;
  std::string bytes_;
};

}  // namespace gpuprobe
