// The server side of one stream of a job's events (Run, Check and Watch). The job manager
// publishes events into an outbox, which writes them one at a time (gRPC allows one
// outstanding write per stream); after the job's finished event is written the stream ends
// with the job's status.
//
// The submission and the replay wait on the job store, so they run on BlockingCalls, never on
// the gRPC thread that opened the stream.
//
// Lifetime: gRPC owns the reactor and OnDone deletes it; the manager (and a call still waiting
// to run) hold the outbox, so the outbox outlives the reactor and drops events once the stream
// is gone. A client that leaves only stops watching: the job goes on.
#pragma once

#include <deque>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "gpuprobe/v1/probe.grpc.pb.h"
#include "server/api/blocking_calls.h"
#include "server/jobs/job_manager.h"

namespace gpuprobe {

class JobStreamReactor final : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  // A stream of the job that `job_id` names once it runs on `calls` (it may submit one; its
  // error ends the stream); replays the last attempt's stored events, or every attempt's, then
  // follows the job. RESOURCE_EXHAUSTED ends it at once while `calls` has no room. With
  // `v1_rows`, a moe-union sweep's results go out as v1 clients read them (MoeUnionRowView).
  static JobStreamReactor* Start(JobManager& manager, BlockingCalls& calls,
                                 absl::AnyInvocable<absl::StatusOr<std::string>() &&> job_id,
                                 bool all_attempts, bool v1_rows);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  class Outbox;

  explicit JobStreamReactor(bool v1_rows);

  std::shared_ptr<Outbox> outbox_;
};

}  // namespace gpuprobe
