// A bounded pool of threads for the calls that wait on the job store, so that no gRPC callback
// thread blocks: the callback API runs every handler and stream reaction on a few shared
// threads, and a slow store would otherwise stall every stream behind one call.
//
//   BlockingCalls calls(/*threads=*/8, /*max_waiting=*/1024);
//   if (!calls.Schedule([reactor] { reactor->Finish(Work()); })) {
//     reactor->Finish(ToGrpcStatus(calls.Busy()));
//   }
#pragma once

#include <cstddef>
#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace gpuprobe {

class BlockingCalls {
 public:
  BlockingCalls(int threads, size_t max_waiting);
  // Runs the calls already scheduled, then joins the threads.
  ~BlockingCalls();
  BlockingCalls(const BlockingCalls&) = delete;
  BlockingCalls& operator=(const BlockingCalls&) = delete;

  // Runs `call` on one of the pool's threads; false (and `call` dropped unrun) when
  // `max_waiting` calls already wait for a thread.
  bool Schedule(absl::AnyInvocable<void() &&> call);

  // What a refused call answers: RESOURCE_EXHAUSTED, saying how many wait.
  absl::Status Busy() const;

 private:
  void Serve();

  const size_t max_waiting_;
  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void() &&>> waiting_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace gpuprobe
