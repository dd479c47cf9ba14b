// EventFanout keeps each job's stored events and its watchers in one order, and one job's slow
// store write holds up no other job.
#include "server/jobs/event_fanout.h"

#include <stdlib.h>

#include <thread>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/sqlite_job_store.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

class Recorder final : public JobEventSink {
 public:
  bool Publish(const v1::JobEvent& event) override {
    absl::MutexLock lock(&mu_);
    events_.push_back(event);
    return true;
  }
  std::vector<v1::JobEvent> events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::JobEvent> events_ ABSL_GUARDED_BY(mu_);
};

v1::JobEvent Progress(int reps_done) {
  v1::JobEvent e;
  e.mutable_progress()->set_reps_done(reps_done);
  return e;
}

class EventFanoutTest : public testing::Test {
 protected:
  testing_support::ScopedTempDir temp_{"gpuprobe_fanout"};  // removed last

  void SetUp() override {
    absl::StatusOr<std::unique_ptr<JobStore>> store =
        SqliteJobStore::Open(temp_.path() + "/jobs.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    fanout_ = std::make_unique<EventFanout>(*store_);
  }

  std::string NewJobId() {
    v1::SubmitRequest request;
    request.mutable_sweep()->set_reps(3);
    absl::StatusOr<JobStore::Inserted> inserted =
        store_->Insert(NewJob{.request = request}, "tester", "", absl::Now(), [](const v1::Job& j) {
          v1::JobEvent e;
          e.mutable_accepted()->set_job_id(j.id());
          return e;
        });
    EXPECT_TRUE(inserted.ok()) << inserted.status();
    return inserted.ok() ? inserted->job.id() : "";
  }

  // Publishes `event` in a thread whose store write waits, after appending, until `release`.
  std::thread PublishHeld(const std::string& job_id, const v1::JobEvent& event,
                          absl::Notification& appended, absl::Notification& release) {
    return std::thread([this, job_id, event, &appended, &release] {
      absl::Status s = fanout_->Publish(job_id, event, [&]() -> absl::StatusOr<bool> {
        if (absl::Status a = store_->AppendEvent(job_id, event); !a.ok()) return a;
        appended.Notify();
        release.WaitForNotification();
        return true;
      });
      EXPECT_TRUE(s.ok()) << s;
    });
  }

  std::unique_ptr<JobStore> store_;
  std::unique_ptr<EventFanout> fanout_;
};

TEST_F(EventFanoutTest, AWatcherArrivingDuringAStoreWriteHearsTheEventOnceAfterIt) {
  const std::string job = NewJobId();
  absl::Notification appended, release, watched;
  std::thread publisher = PublishHeld(job, Progress(1), appended, release);
  appended.WaitForNotification();

  auto recorder = std::make_shared<Recorder>();
  std::thread watcher([&] {
    EXPECT_TRUE(fanout_->Watch(job, recorder, /*all_attempts=*/false).ok());
    watched.Notify();
  });
  // The replay waits for the job's write in flight; had it read the store meanwhile it would
  // already hold the event, and hear it a second time when the write is told.
  EXPECT_FALSE(watched.WaitForNotificationWithTimeout(absl::Milliseconds(200)));
  release.Notify();
  publisher.join();
  watcher.join();

  ASSERT_TRUE(fanout_
                  ->Publish(job, Progress(2),
                            [&]() -> absl::StatusOr<bool> {
                              if (absl::Status a = store_->AppendEvent(job, Progress(2)); !a.ok()) {
                                return a;
                              }
                              return true;
                            })
                  .ok());
  std::vector<int> reps;
  for (const v1::JobEvent& e : recorder->events()) {
    if (e.has_progress()) reps.push_back(e.progress().reps_done());
  }
  EXPECT_THAT(reps, testing::ElementsAre(1, 2));
}

TEST_F(EventFanoutTest, ADefaultWatchOfAJobQueuedAgainFollowsTheRerunNotTheInterruptedRun) {
  // Attempt 1 ran, stored a progress event, and lost its lease: the job is queued again.
  const std::string job = NewJobId();
  const DeviceRegistration device{.index = 0, .model = "cpu", .description = "cpu"};
  const DaemonRegistration daemon{.daemon_id = "d", .host = "h", .devices = {device}};
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(store_->Register(daemon, t0).ok());
  absl::StatusOr<std::optional<JobStore::Claimed>> claimed =
      store_->ClaimNext(daemon, device, t0, t0 + absl::Seconds(1));
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  v1::JobEvent interrupted = Progress(1);
  interrupted.set_attempt(1);
  ASSERT_TRUE(store_->AppendEvent(job, interrupted).ok());
  absl::StatusOr<std::vector<ExpiredLease>> requeued =
      store_->RequeueExpired(2, t0 + absl::Seconds(2));
  ASSERT_TRUE(requeued.ok());
  ASSERT_EQ(requeued->size(), 1u);
  EXPECT_TRUE(requeued->front().queued_again);

  // A watcher arriving before the rerun starts hears neither the interrupted run's events nor,
  // later, anything but the rerun's; asked for all attempts, it hears both.
  auto last = std::make_shared<Recorder>(), all = std::make_shared<Recorder>();
  ASSERT_TRUE(fanout_->Watch(job, last, /*all_attempts=*/false).ok());
  ASSERT_TRUE(fanout_->Watch(job, all, /*all_attempts=*/true).ok());
  v1::JobEvent rerun = Progress(1);
  rerun.set_attempt(2);
  fanout_->Tell(job, rerun);
  std::vector<uint32_t> attempts;
  for (const v1::JobEvent& e : last->events()) attempts.push_back(e.attempt());
  EXPECT_THAT(attempts, testing::ElementsAre(0u, 2u)) << "accepted, then the rerun's";
  attempts.clear();
  for (const v1::JobEvent& e : all->events()) attempts.push_back(e.attempt());
  EXPECT_THAT(attempts, testing::ElementsAre(0u, 1u, 2u));
}

TEST_F(EventFanoutTest, OneJobsHeldStoreWriteHoldsUpNoOtherJob) {
  const std::string slow = NewJobId(), other = NewJobId();
  absl::Notification appended, release;
  std::thread publisher = PublishHeld(slow, Progress(1), appended, release);
  appended.WaitForNotification();

  auto recorder = std::make_shared<Recorder>();
  EXPECT_TRUE(fanout_->Watch(other, recorder, /*all_attempts=*/false).ok());
  EXPECT_TRUE(fanout_->Publish(other, Progress(7), [] { return absl::StatusOr<bool>(true); }).ok());
  fanout_->Tell(other, Progress(8));
  release.Notify();
  publisher.join();

  std::vector<int> reps;
  for (const v1::JobEvent& e : recorder->events()) {
    if (e.has_progress()) reps.push_back(e.progress().reps_done());
  }
  EXPECT_THAT(reps, testing::ElementsAre(7, 8));
}

TEST_F(EventFanoutTest, AStoreErrorIsReturnedAndNothingIsTold) {
  const std::string job = NewJobId();
  auto recorder = std::make_shared<Recorder>();
  ASSERT_TRUE(fanout_->Watch(job, recorder, /*all_attempts=*/false).ok());
  const size_t replayed = recorder->events().size();
  const absl::Status s = fanout_->Publish(job, Progress(1), [] {
    return absl::StatusOr<bool>(absl::ResourceExhaustedError("disk full"));
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(fanout_->Publish(job, Progress(2), [] { return absl::StatusOr<bool>(false); }).ok());
  EXPECT_EQ(recorder->events().size(), replayed);
}

}  // namespace
}  // namespace gpuprobe
