#include "server/jobs/store_health.h"

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {

bool StoreHealth::Writable() {
  absl::MutexLock lock(&mu_);
  return writable_;
}

void StoreHealth::OnChange(std::function<void(bool)> listener) {
  absl::MutexLock lock(&mu_);
  listener_ = std::move(listener);
}

void StoreHealth::Set(bool writable, const absl::Status& why) {
  std::function<void(bool)> listener;
  {
    absl::MutexLock lock(&mu_);
    if (writable_ == writable) return;
    writable_ = writable;
    listener = listener_;
  }
  if (writable) {
    spdlog::info("the job store can write again; serving");
  } else {
    spdlog::error(
        "the job store cannot write ({}): new jobs are refused and health is "
        "NOT_SERVING until it can",
        why.ToString());
  }
  if (listener) listener(writable);
}

absl::Status StoreHealth::Ensure() {
  if (Writable()) return absl::OkStatus();
  if (absl::Status probe = store_.ProbeWrite(); !probe.ok()) {
    // RESOURCE_EXHAUSTED: gRPC's code for a full file system; the daemon itself is reachable.
    return absl::ResourceExhaustedError(
        absl::StrCat("gpuprobed's job store cannot write (", probe.message(),
                     "); no job is accepted until it can: ",
                     store_.Shared() ? "the --store database must take writes again"
                                     : "free disk space under --data-dir"));
  }
  Set(true, absl::OkStatus());
  return absl::OkStatus();
}

}  // namespace gpuprobe
