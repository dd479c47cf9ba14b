// UploadModule's stream: the client's chunks read into one buffer, the module refused at once
// (RESOURCE_EXHAUSTED) when it passes the daemon's size limit, then, once the client has sent
// it all, checked and stored on a pool thread (JobManager::StoreModule), never on a gRPC
// callback thread.
//
//   auto* reactor = new ModuleUploadReactor(manager, calls, context, caller.name, response);
//   reactor->Start();
//   return reactor;
#pragma once

#include <string>

#include "absl/status/status.h"
#include "gpuprobe/v1/module.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/api/blocking_calls.h"
#include "server/jobs/job_manager.h"

namespace gpuprobe {

class ModuleUploadReactor final : public grpc::ServerReadReactor<v1::ModuleChunk> {
 public:
  ModuleUploadReactor(JobManager& manager, BlockingCalls& calls,
                      grpc::CallbackServerContext* context, std::string uploader,
                      v1::Module* response);

  // Reads the first chunk.
  void Start() { StartRead(&chunk_); }
  // Ends the call with `status` unread (a caller not allowed to upload).
  void Refuse(const absl::Status& status);

  void OnReadDone(bool ok) override;
  void OnDone() override { delete this; }

 private:
  JobManager& manager_;
  BlockingCalls& calls_;
  grpc::CallbackServerContext* const context_;
  const std::string uploader_;
  v1::Module* const response_;
  v1::ModuleChunk chunk_;
  std::string bytes_;
};

}  // namespace gpuprobe
