#include "server/api/job_stream_reactor.h"

#include <optional>

#include "server/api/grpc_status.h"
#include "server/api/moe_union_row_view.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {

class JobStreamReactor::Outbox final : public JobEventSink {
 public:
  Outbox(JobStreamReactor* reactor, bool v1_rows) : reactor_(reactor) {
    if (v1_rows) view_.emplace();
  }

  // Manager (worker or replaying) thread. Starts a write unless one is in flight; OnWriteDone
  // continues the chain.
  bool Publish(const v1::JobEvent& event) override {
    const v1::JobEvent* to_write = nullptr;
    JobStreamReactor* reactor = nullptr;
    {
      absl::MutexLock lock(&mu_);
      if (reactor_ == nullptr || finish_called_) return false;
      pending_.push_back(view_ ? view_->View(event) : event);
      if (event.has_finished()) final_status_ = StatusOfFinished(event.finished());
      if (writing_) return true;
      writing_ = true;
      to_write = &pending_.front();  // std::deque keeps element addresses on push_back
      reactor = reactor_;
    }
    // Outside the lock: OnDone (which detaches) cannot run while this write is owed.
    reactor->StartWrite(to_write);
    return true;
  }

  // gRPC thread, after each write.
  void WriteDone(bool ok) {
    const v1::JobEvent* to_write = nullptr;
    JobStreamReactor* reactor = nullptr;
    {
      absl::MutexLock lock(&mu_);
      const bool was_final = pending_.front().has_finished();
      pending_.pop_front();
      if (!ok) {
        FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "stream closed by the client"));
        return;
      }
      if (was_final) {
        FinishLocked(final_status_);
        return;
      }
      if (pending_.empty()) {
        writing_ = false;
        return;
      }
      to_write = &pending_.front();
      reactor = reactor_;
    }
    reactor->StartWrite(to_write);
  }

  // gRPC thread: the client went away or the server is shutting down.
  void Cancelled() {
    absl::MutexLock lock(&mu_);
    if (!writing_) FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled"));
  }

  void FinishNow(const grpc::Status& status) {
    absl::MutexLock lock(&mu_);
    FinishLocked(status);
  }

  void Detach() {
    absl::MutexLock lock(&mu_);
    reactor_ = nullptr;
  }

 private:
  static grpc::Status StatusOfFinished(const v1::JobFinished& f) {
    return f.state() == v1::JOB_STATE_SUCCEEDED
               ? grpc::Status::OK
               : grpc::Status(static_cast<grpc::StatusCode>(f.error_code()), f.error_message());
  }

  void FinishLocked(const grpc::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finish_called_ || reactor_ == nullptr) return;
    finish_called_ = true;
    reactor_->Finish(status);
  }

  absl::Mutex mu_;
  JobStreamReactor* reactor_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::JobEvent> pending_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_called_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status final_status_ ABSL_GUARDED_BY(mu_);
  std::optional<MoeUnionRowView> view_ ABSL_GUARDED_BY(mu_);
};

JobStreamReactor::JobStreamReactor(bool v1_rows)
    : outbox_(std::make_shared<Outbox>(this, v1_rows)) {}

JobStreamReactor* JobStreamReactor::Start(
    JobManager& manager, BlockingCalls& calls,
    absl::AnyInvocable<absl::StatusOr<std::string>() &&> job_id, bool all_attempts, bool v1_rows) {
  auto* reactor = new JobStreamReactor(v1_rows);
  std::shared_ptr<Outbox> outbox = reactor->outbox_;
  const bool scheduled =
      calls.Schedule([&manager, outbox, job_id = std::move(job_id), all_attempts]() mutable {
        const absl::StatusOr<std::string> id = std::move(job_id)();
        if (!id.ok()) {
          spdlog::info("refused request: {}", id.status().ToString());
          outbox->FinishNow(ToGrpcStatus(id.status()));
          return;
        }
        if (absl::Status s = manager.Watch(*id, outbox, all_attempts); !s.ok()) {
          outbox->FinishNow(ToGrpcStatus(s));
        }
      });
  if (!scheduled) outbox->FinishNow(ToGrpcStatus(calls.Busy()));
  return reactor;
}

void JobStreamReactor::OnWriteDone(bool ok) { outbox_->WriteDone(ok); }

void JobStreamReactor::OnCancel() { outbox_->Cancelled(); }

// The manager drops the outbox at its next event (Publish answers false once detached).
void JobStreamReactor::OnDone() {
  outbox_->Detach();
  delete this;
}

}  // namespace gpuprobe
