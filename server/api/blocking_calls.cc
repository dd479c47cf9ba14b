#include "server/api/blocking_calls.h"

#include <utility>

#include "absl/strings/str_format.h"

namespace gpuprobe {

BlockingCalls::BlockingCalls(int threads, size_t max_waiting) : max_waiting_(max_waiting) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Serve(); });
}

BlockingCalls::~BlockingCalls() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

bool BlockingCalls::Schedule(absl::AnyInvocable<void() &&> call) {
  absl::MutexLock lock(&mu_);
  if (waiting_.size() >= max_waiting_) return false;
  waiting_.push_back(std::move(call));
  return true;
}

absl::Status BlockingCalls::Busy() const {
  return absl::ResourceExhaustedError(absl::StrFormat(
      "gpuprobed is busy: %d calls already wait for its job store; try again shortly",
      max_waiting_));
}

void BlockingCalls::Serve() {
  while (true) {
    absl::AnyInvocable<void() &&> call;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !waiting_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (waiting_.empty()) return;  // stopping, and nothing left to run
      call = std::move(waiting_.front());
      waiting_.pop_front();
    }
    std::move(call)();
  }
}

}  // namespace gpuprobe
