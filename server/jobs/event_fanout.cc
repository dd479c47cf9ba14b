#include "server/jobs/event_fanout.h"

#include <algorithm>
#include <iterator>

#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "google/protobuf/util/time_util.h"
#include "server/store/job_record.h"

namespace gpuprobe {
namespace {

// The finished event a job's record implies, for a job that ended without one stored (a
// crash between recording the end and storing the event, or a job failed at restart).
v1::JobEvent FinishedFromRecord(const v1::Job& job) {
  v1::JobEvent event;
  v1::JobFinished* f = event.mutable_finished();
  f->set_state(job.state());
  f->set_error_code(job.error_code());
  f->set_error_message(job.error_message());
  f->set_rows(job.results());
  *f->mutable_finished_at() = job.finished_at();
  event.set_attempt(job.attempts());
  return event;
}

// The attempt a default Watch follows: the running or the last one; for a job queued again
// after an interrupted run, the next one (the earlier attempts' events are superseded, so a
// watcher that starts before the rerun does not get them ahead of the rerun's).
uint32_t AttemptThatCounts(const v1::Job& job) {
  return job.state() == v1::JOB_STATE_QUEUED ? job.attempts() + 1 : job.attempts();
}

}  // namespace

v1::JobEvent Stamped(v1::JobEvent event) {
  *event.mutable_stored_at() =
      google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(absl::Now()));
  return event;
}

class EventFanout::JobOrder {
 public:
  JobOrder(EventFanout& fanout, const std::string& job_id) : fanout_(fanout), job_id_(job_id) {
    {
      absl::MutexLock lock(&fanout_.mu_);
      std::unique_ptr<Order>& order = fanout_.orders_[job_id_];
      if (order == nullptr) order = std::make_unique<Order>();
      ++order->users;
      order_ = order.get();
    }
    order_->mu.Lock();
  }
  ~JobOrder() {
    order_->mu.Unlock();
    absl::MutexLock lock(&fanout_.mu_);
    if (--order_->users == 0) fanout_.orders_.erase(job_id_);
  }
  JobOrder(const JobOrder&) = delete;
  JobOrder& operator=(const JobOrder&) = delete;

 private:
  EventFanout& fanout_;
  const std::string job_id_;
  Order* order_;
};

absl::Status EventFanout::Publish(const std::string& job_id, const v1::JobEvent& event,
                                  absl::FunctionRef<absl::StatusOr<bool>()> store) {
  JobOrder order(*this, job_id);
  ASSIGN_OR_RETURN(const bool stored, store());
  if (stored) {
    absl::MutexLock lock(&mu_);
    TellLocked(job_id, event);
  }
  return absl::OkStatus();
}

void EventFanout::Tell(const std::string& job_id, const v1::JobEvent& event) {
  JobOrder order(*this, job_id);
  absl::MutexLock lock(&mu_);
  TellLocked(job_id, event);
}

void EventFanout::TellLocked(const std::string& job_id, const v1::JobEvent& event) {
  auto it = watchers_.find(job_id);
  if (it == watchers_.end()) return;
  std::erase_if(it->second, [&](const auto& sink) { return !sink->Publish(event); });
  if (event.has_finished() || it->second.empty()) watchers_.erase(it);
}

absl::Status EventFanout::Watch(const std::string& job_id, std::shared_ptr<JobEventSink> sink,
                                bool all_attempts) {
  if (store_.Shared()) {
    // The job may run on any daemon: follow the store.
    ASSIGN_OR_RETURN(v1::Job job, store_.Get(job_id));
    {
      absl::MutexLock lock(&mu_);
      store_watchers_.push_back(
          StoreWatcher{.job_id = job_id,
                       .sink = std::move(sink),
                       .first_attempt = all_attempts ? 0 : AttemptThatCounts(job)});
    }
    // What is stored already, now: the next announcement, or the backstop poll, may be seconds
    // away (a job that ended has none to come).
    FeedStoreWatchers(std::set<std::string>{job_id});
    return absl::OkStatus();
  }
  JobOrder order(*this, job_id);
  ASSIGN_OR_RETURN(v1::Job job, store_.Get(job_id));
  ASSIGN_OR_RETURN(std::vector<v1::JobEvent> events, store_.Events(job_id));
  bool finished = false;
  for (const v1::JobEvent& e : events) {
    // Events of earlier attempts (attempt 0: accepted, before any) only when asked for.
    if (!all_attempts && e.attempt() != 0 && e.attempt() < AttemptThatCounts(job)) continue;
    if (!sink->Publish(e)) return absl::OkStatus();
    finished = finished || e.has_finished();
  }
  if (IsTerminal(job.state())) {
    if (!finished) sink->Publish(FinishedFromRecord(job));
    return absl::OkStatus();
  }
  absl::MutexLock lock(&mu_);
  watchers_[job_id].push_back(std::move(sink));
  return absl::OkStatus();
}

void EventFanout::FeedStoreWatchers(const std::optional<std::set<std::string>>& job_ids) {
  std::vector<StoreWatcher> watchers;
  {
    absl::MutexLock lock(&mu_);
    watchers.swap(store_watchers_);
  }
  std::erase_if(watchers, [&](StoreWatcher& w) {
    return (!job_ids.has_value() || job_ids->count(w.job_id) > 0) && !Feed(w);
  });
  absl::MutexLock lock(&mu_);
  // Watchers added meanwhile come after the ones already followed.
  watchers.insert(watchers.end(), std::make_move_iterator(store_watchers_.begin()),
                  std::make_move_iterator(store_watchers_.end()));
  store_watchers_.swap(watchers);
}

bool EventFanout::Feed(StoreWatcher& w) {
  absl::StatusOr<std::vector<v1::JobEvent>> events = store_.Events(w.job_id, w.next_seq);
  if (!events.ok()) return true;  // the store is away for now; try again
  for (const v1::JobEvent& e : *events) {
    ++w.next_seq;
    if (e.attempt() != 0 && e.attempt() < w.first_attempt) continue;
    if (!w.sink->Publish(e) || e.has_finished()) return false;
  }
  if (!events->empty()) return true;
  // Nothing new: a job ended without its finished event stored (failed when its lease expired
  // for the last time) gets one made from its record.
  absl::StatusOr<v1::Job> job = store_.Get(w.job_id);
  if (!job.ok() || !IsTerminal(job->state())) return true;
  absl::StatusOr<std::vector<v1::JobEvent>> late = store_.Events(w.job_id, w.next_seq);
  if (late.ok() && !late->empty()) return true;  // it ended just now: the next pass has it
  w.sink->Publish(FinishedFromRecord(*job));
  return false;
}

}  // namespace gpuprobe
