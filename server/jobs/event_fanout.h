// The fan-out of jobs' events to their watchers (Run, Check and Watch streams), apart from the
// queues that produce them.
//
// Every event is stored before any watcher hears it, and a watcher hears the job's stored
// events first, then the live ones, with no gap and no duplicate. That order is kept per job:
// storing an event and telling it, or replaying a job's events and subscribing, hold the job's
// own lock, never one shared by every job, so a slow store write holds up only its job.
//
// With a shared store (a fleet), jobs may run on other daemons, so watchers follow the store's
// events instead (FeedStoreWatchers reads them when the store announces a change).
//
//   EventFanout fanout(store);
//   RETURN_IF_ERROR(fanout.Publish(id, event, [&] { return store.AppendEvent(id, event); }));
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/store/job_store.h"

namespace gpuprobe {

// Receives one job's events in order. Publish is called with a lock of the fan-out held and
// must not block (queue and return) nor call back into the daemon; it returns false once the
// sink takes no more events (its client left), and the fan-out then forgets it.
class JobEventSink {
 public:
  virtual ~JobEventSink() = default;
  virtual bool Publish(const v1::JobEvent& event) = 0;
};

// The event stamped with the time it is stored (now).
v1::JobEvent Stamped(v1::JobEvent event);

class EventFanout {
 public:
  explicit EventFanout(JobStore& store) : store_(store) {}

  // Stores the event with `store` (true: stored; false: nothing to tell, e.g. the job was not
  // queued any more), then tells the job's watchers; both in the job's order. A store error is
  // returned and nothing is told.
  absl::Status Publish(const std::string& job_id, const v1::JobEvent& event,
                       absl::FunctionRef<absl::StatusOr<bool>()> store);
  // Tells the job's watchers an event that could not be stored (why a job ended unrecorded).
  void Tell(const std::string& job_id, const v1::JobEvent& event);

  // Replays the job's stored events (of its last attempt only, unless `all_attempts`) into
  // `sink`, then follows it until its finished event. NOT_FOUND for an unknown job.
  absl::Status Watch(const std::string& job_id, std::shared_ptr<JobEventSink> sink,
                     bool all_attempts);

  // A shared store: one pass over the watchers of `job_ids` (nullopt: of every job), each told
  // the events stored since the last.
  void FeedStoreWatchers(const std::optional<std::set<std::string>>& job_ids = std::nullopt);

 private:
  // A watcher of a shared store's job, fed by polling the store.
  struct StoreWatcher {
    std::string job_id;
    std::shared_ptr<JobEventSink> sink;
    int64_t next_seq = 0;        // the first event not yet read
    uint32_t first_attempt = 0;  // events of earlier attempts are skipped
  };

  // The lock that orders one job's stored events with its watchers' replay, held while it
  // lives; it exists while someone holds or waits for it.
  class JobOrder;
  struct Order {
    absl::Mutex mu;
    int users = 0;
  };
  void TellLocked(const std::string& job_id, const v1::JobEvent& event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // False for a watcher that is done.
  bool Feed(StoreWatcher& watcher);

  JobStore& store_;
  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<Order>> orders_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<std::shared_ptr<JobEventSink>>> watchers_ ABSL_GUARDED_BY(mu_);
  std::vector<StoreWatcher> store_watchers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuprobe
