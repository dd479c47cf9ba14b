// Ctrl-C while a command follows a job it submitted (sweep, check, run).
//
//   CancelOnInterrupt cancel(context, rpc);   // rpc: the stream's context
//   ... on the accepted event: cancel.Known(job_id);
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "client/commands.h"

namespace gpuprobe {

// The first SIGINT runs `on_interrupt` on a thread of this object's own (so it may make RPCs); a
// second one ends the process as SIGINT does. Outside the object's life SIGINT is as it was.
class OnInterrupt {
 public:
  explicit OnInterrupt(std::function<void()> on_interrupt);
  OnInterrupt(const OnInterrupt&) = delete;
  OnInterrupt& operator=(const OnInterrupt&) = delete;
  ~OnInterrupt();

 private:
  std::function<void()> on_interrupt_;
  std::thread thread_;
};

// At Ctrl-C, asks gpuprobed to cancel the job (it then ends CANCELLED, with the rows of its
// completed reps, and the command exits 3), saying so on stderr; a second Ctrl-C leaves at once,
// the cancel standing. Before the daemon named the job, or if the cancel fails, the command
// stops following and says how to find or cancel the job.
class CancelOnInterrupt {
 public:
  CancelOnInterrupt(const ClientContext& context, grpc::ClientContext& stream);
  // The job's id, once the daemon named it.
  void Known(const std::string& job_id);

 private:
  void Cancel();

  const ClientContext& context_;
  grpc::ClientContext& stream_;
  std::mutex mutex_;
  std::string job_id_;
  OnInterrupt interrupt_;  // last: its thread may run Cancel() until it is destroyed
};

}  // namespace gpuprobe
