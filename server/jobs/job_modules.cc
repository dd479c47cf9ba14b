// JobManager's modules: what clients upload for the kernel probe, checked and stored.
#include <string>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/module_inspection.h"
#include "common/sha256.h"
#include "common/status_macros.h"
#include "server/jobs/job_manager.h"

namespace gpuprobe {

absl::StatusOr<v1::Module> JobManager::StoreModule(const std::string& bytes,
                                                   const std::string& uploader) {
  if (!limits_.client_kernels) {
    return absl::FailedPreconditionError(
        "module: this gpuprobed takes no client GPU code (--client-kernels=false, or "
        "--isolation=none)");
  }
  if (static_cast<int64_t>(bytes.size()) > limits_.max_module_bytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "module: %d bytes is more than the %d a module may have (--max-module-bytes)", bytes.size(),
        limits_.max_module_bytes));
  }
  ASSIGN_OR_RETURN(v1::Module module, InspectModule(bytes));
  RETURN_IF_ERROR(store_health_.Ensure());
  return store_->PutModule({.module = std::move(module), .bytes = bytes, .uploader = uploader},
                           limits_.module_quota, absl::Now());
}

absl::StatusOr<v1::Module> JobManager::GetModule(const std::string& id) {
  if (!IsSha256Hex(id)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "id: \"%s\" is not a module id (the sha256 of its bytes, 64 lower-case hex digits)",
        id.substr(0, 80)));
  }
  ASSIGN_OR_RETURN(StoredModule stored, store_->GetModule(id, /*with_bytes=*/false));
  return stored.module;
}

}  // namespace gpuprobe
