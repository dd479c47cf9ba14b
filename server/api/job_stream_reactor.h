// The server side of one stream of a job's events (Run, Check and Watch). The job manager
// publishes events into an outbox, which writes them one at a time (gRPC allows one
// outstanding write per stream); after the job's finished event is written the stream ends
// with the job's status.
//
// Lifetime: gRPC owns the reactor and OnDone deletes it; the manager holds the outbox as a
// watcher, so the outbox outlives the reactor and drops events once the stream is gone. A
// client that leaves only stops watching: the job goes on.
#pragma once

#include <deque>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "gpuprobe/v1/probe.grpc.pb.h"
#include "server/jobs/job_manager.h"

namespace gpuprobe {

class JobStreamReactor final : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  // Follows `job_id` (a refused submission: its status ends the stream at once); replays the
  // last attempt's stored events, or every attempt's.
  JobStreamReactor(JobManager& manager, absl::StatusOr<std::string> job_id,
                   bool all_attempts = false);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  class Outbox;

  std::shared_ptr<Outbox> outbox_;
};

}  // namespace gpuprobe
