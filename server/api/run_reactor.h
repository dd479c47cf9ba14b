// The server side of one Run stream. Events published by the device worker are queued in an
// outbox and written one at a time (gRPC allows one outstanding write per stream); after the
// job's finished event is written the stream ends with the job's status.
//
// Lifetime: gRPC owns the reactor and OnDone deletes it; the worker holds the outbox through
// the job, so the outbox outlives the reactor and drops events once the stream is gone.
#pragma once

#include <deque>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "gpuprobe/v1/probe.grpc.pb.h"
#include "server/jobs/device_worker.h"

namespace gpuprobe {

// Serves both Run (sweep jobs) and Check (exactness jobs): the stream carries a job's events.
class RunReactor final : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  // Queues the job on `worker` with this stream as its sink; a refused request (or a refusal
  // by the worker) ends the stream at once with that status.
  RunReactor(DeviceWorker& worker, absl::StatusOr<std::shared_ptr<Job>> job);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  class Outbox;

  std::shared_ptr<Outbox> outbox_;
  std::shared_ptr<Job> job_;
};

}  // namespace gpuprobe
