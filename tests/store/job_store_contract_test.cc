// The JobStore contract, run against both stores (store_test_fixture.h).
#include <algorithm>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/store_url.h"
#include "tests/store/store_test_fixture.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;

class JobStoreContractTest : public StoreTest {
 protected:
  // Writes `bytes` into a job's column behind the store's back (a damaged record).
  void Damage(const std::string& column, const std::string& id, const std::string& bytes) {
    std::unique_ptr<SqlConnection> raw = Raw();
    ASSERT_NE(raw, nullptr);
    ASSERT_TRUE(raw->Query(absl::StrCat("UPDATE jobs SET ", column, " = ?1 WHERE id = ?2"),
                           {SqlBlob{bytes}, id})
                    .ok());
  }

  static v1::SubmitRequest Sweep(int priority = 0, const std::string& gpu = "",
                                 const std::string& host = "") {
    v1::SubmitRequest r;
    r.mutable_sweep()->set_reps(3);
    r.set_priority(priority);
    r.set_gpu(gpu);
    r.set_host(host);
    return r;
  }
  static v1::JobEvent Accepted(const v1::Job& job) {
    v1::JobEvent e;
    e.mutable_accepted()->set_job_id(job.id());
    return e;
  }
  static std::string Insert(JobStore& store, const v1::SubmitRequest& r) {
    absl::StatusOr<JobStore::Inserted> in =
        store.Insert(NewJob{.request = r}, "tester", "", absl::Now(), Accepted);
    EXPECT_TRUE(in.ok()) << in.status();
    return in.ok() ? in->job.id() : "";
  }
  static v1::JobEvent Result(int attempt) {
    v1::JobEvent e;
    e.mutable_result()->set_arm_index(0);
    e.set_attempt(attempt);
    return e;
  }
  static v1::JobEvent Finished(int attempt) {
    v1::JobEvent e;
    e.mutable_finished()->set_state(v1::JOB_STATE_SUCCEEDED);
    e.set_attempt(attempt);
    return e;
  }
  // The id the device claims next, "" for none.
  static std::string Claim(JobStore& store, const DaemonRegistration& daemon,
                           const DeviceRegistration& device, absl::Time now,
                           absl::Duration lease = absl::Seconds(30)) {
    absl::StatusOr<std::optional<JobStore::Claimed>> c =
        store.ClaimNext(daemon, device, now, now + lease);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() && c->has_value() ? (*c)->job.id() : "";
  }

  const DeviceRegistration cpu0_{
      .index = 0, .model = "cpu", .description = "cpu 0", .calibrated_read_tbps = 0.1};
  const DeviceRegistration x1_{
      .index = 1, .model = "X", .description = "X 1", .calibrated_read_tbps = 3.0};
  // The ids of `expired` that were queued again.
  static std::vector<std::string> QueuedAgain(
      const absl::StatusOr<std::vector<ExpiredLease>>& expired) {
    EXPECT_TRUE(expired.ok()) << expired.status();
    std::vector<std::string> ids;
    if (!expired.ok()) return ids;
    for (const ExpiredLease& e : *expired) {
      if (e.queued_again) ids.push_back(e.job_id);
    }
    return ids;
  }

  const DaemonRegistration a_{.daemon_id = "a", .host = "h1", .devices = {cpu0_}};
  const DaemonRegistration b_{.daemon_id = "b", .host = "h2", .devices = {x1_}};
};

// Several daemons on one store at once: PostgreSQL only (a SQLite file takes one daemon, see
// sqlite_job_store_test.cc).
class SharedStoreContractTest : public JobStoreContractTest {};

TEST_P(SharedStoreContractTest, IdempotencyKeysAreUniqueWithinTheirScopeAcrossDaemons) {
  std::unique_ptr<JobStore> one = Open(), two = Open();
  v1::SubmitRequest r = Sweep();
  r.set_idempotency_key("k");
  absl::StatusOr<JobStore::Inserted> a =
      one->Insert(NewJob{.request = r}, "x", "alice", absl::Now(), Accepted);
  absl::StatusOr<JobStore::Inserted> b =
      two->Insert(NewJob{.request = r}, "x", "bob", absl::Now(), Accepted);
  absl::StatusOr<JobStore::Inserted> again =
      two->Insert(NewJob{.request = r}, "x", "alice", absl::Now(), Accepted);
  ASSERT_TRUE(a.ok() && b.ok() && again.ok());
  EXPECT_NE(a->job.id(), b->job.id());
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->job.id(), a->job.id());
  absl::StatusOr<std::optional<v1::Job>> found = one->FindByIdempotencyKey("bob", "k");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->id(), b->job.id());
  absl::StatusOr<std::vector<v1::JobEvent>> events = one->Events(a->job.id(), 0);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_TRUE((*events)[0].has_accepted());
}

TEST_P(JobStoreContractTest, ClaimsFollowPriorityThenSubmissionOrderAndTheJobsTargets) {
  std::unique_ptr<JobStore> store = Open();
  const std::string low = Insert(*store, Sweep(0));
  const std::string high = Insert(*store, Sweep(5));
  const std::string for_x = Insert(*store, Sweep(0, "X"));
  const std::string for_h2 = Insert(*store, Sweep(0, "", "h2"));
  v1::SubmitRequest pinned = Sweep();
  pinned.set_device(1);
  const std::string on_1 = Insert(*store, pinned);
  const absl::Time now = absl::Now();
  EXPECT_EQ(Claim(*store, a_, cpu0_, now), high);
  EXPECT_EQ(Claim(*store, a_, cpu0_, now), low);
  EXPECT_EQ(Claim(*store, a_, cpu0_, now), "") << "a cpu on h1 matches none of the rest";
  EXPECT_EQ(Claim(*store, b_, x1_, now), for_x);
  EXPECT_EQ(Claim(*store, b_, x1_, now), for_h2);
  EXPECT_EQ(Claim(*store, b_, x1_, now), on_1);
  absl::StatusOr<v1::Job> job = store->Get(for_x);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job->host(), "h2");
  EXPECT_EQ(job->device(), "X 1");
  EXPECT_EQ(job->attempts(), 1u);
}

TEST_P(SharedStoreContractTest, DaemonsClaimingTogetherTakeEachJobExactlyOnce) {
  std::unique_ptr<JobStore> one = Open(), two = Open();
  std::set<std::string> submitted;
  for (int i = 0; i < 40; ++i) submitted.insert(Insert(*one, Sweep()));
  absl::Mutex mu;
  std::multiset<std::string> claimed;
  std::vector<std::thread> threads;
  for (JobStore* store : {one.get(), two.get(), one.get(), two.get()}) {
    threads.emplace_back([&, store] {
      while (true) {
        const std::string id = Claim(*store, a_, cpu0_, absl::Now());
        if (id.empty()) return;
        absl::MutexLock lock(&mu);
        claimed.insert(id);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(claimed.size(), submitted.size());
  EXPECT_EQ(std::set<std::string>(claimed.begin(), claimed.end()), submitted);
}

TEST_P(JobStoreContractTest, AnExpiredLeaseQueuesTheJobAgainOnceAndTheOldAttemptCannotWrite) {
  std::unique_ptr<JobStore> store = Open();
  const std::string id = Insert(*store, Sweep());
  const absl::Time t0 = absl::Now();
  ASSERT_EQ(Claim(*store, a_, cpu0_, t0, absl::Seconds(10)), id);
  ASSERT_TRUE(store->AppendEvent(id, Result(1)).ok());
  absl::StatusOr<std::vector<ExpiredLease>> early = store->RequeueExpired(2, t0 + absl::Seconds(5));
  ASSERT_TRUE(early.ok());
  EXPECT_TRUE(early->empty());
  absl::StatusOr<std::vector<ExpiredLease>> late = store->RequeueExpired(2, t0 + absl::Seconds(11));
  EXPECT_THAT(QueuedAgain(late), testing::ElementsAre(id));
  EXPECT_EQ(late->front().reason,
            "its lease, held by a, expired 1.0 s ago without renewal (that daemon has left the "
            "fleet registry)");

  EXPECT_EQ(store->AppendEvent(id, Result(1)).code(), absl::StatusCode::kAborted);
  ASSERT_EQ(Claim(*store, b_, x1_, t0 + absl::Seconds(12), absl::Seconds(10)), id);
  EXPECT_EQ(store->AppendEvent(id, Result(1)).code(), absl::StatusCode::kAborted);
  EXPECT_EQ(store->MarkFinished(id, 1, Finished(1), absl::Now(), nullptr).code(),
            absl::StatusCode::kAborted);
  ASSERT_TRUE(store->AppendEvent(id, Result(2)).ok());
  ASSERT_TRUE(store->MarkFinished(id, 2, Finished(2), absl::Now(), nullptr).ok());
  absl::StatusOr<v1::Job> job = store->Get(id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job->attempts(), 2u);
  EXPECT_EQ(job->results(), 1u) << "only the last attempt's results count";
  EXPECT_EQ(job->host(), "h2");
  absl::StatusOr<std::vector<v1::JobEvent>> events = store->Events(id, 0);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 4u);  // accepted, result of 1, result of 2, finished
  EXPECT_TRUE(events->back().has_finished());

  // At the attempts' limit, an expired lease fails the job.
  const std::string twice = Insert(*store, Sweep());
  ASSERT_EQ(Claim(*store, a_, cpu0_, t0, absl::Seconds(1)), twice);
  ASSERT_TRUE(store->RequeueExpired(2, t0 + absl::Seconds(2)).ok());
  ASSERT_EQ(Claim(*store, a_, cpu0_, t0 + absl::Seconds(3), absl::Seconds(1)), twice);
  absl::StatusOr<std::vector<ExpiredLease>> failed =
      store->RequeueExpired(2, t0 + absl::Seconds(5));
  EXPECT_THAT(QueuedAgain(failed), testing::IsEmpty());
  ASSERT_EQ(failed->size(), 1u);
  job = store->Get(twice);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job->error_code(), static_cast<int>(absl::StatusCode::kAborted));
  EXPECT_EQ(job->error_message(), failed->front().reason + "; it ran 2 times, not run again");
  EXPECT_THAT(job->error_message(), HasSubstr("expired 1.0 s ago"));
}

// The reason says whether the lease's daemon still heartbeats (then it is alive, and only this
// job went unrenewed), how long ago it last did, or that it stopped cleanly.
TEST_P(JobStoreContractTest, AnExpiredLeaseSaysWhetherItsDaemonIsAliveAndHowLateItIs) {
  std::unique_ptr<JobStore> store = Open();
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(store->Register(a_, t0).ok());
  ASSERT_TRUE(store->Register(b_, t0).ok());
  const std::string alive = Insert(*store, Sweep());
  ASSERT_EQ(Claim(*store, a_, cpu0_, t0, absl::Seconds(10)), alive);
  const std::string silent = Insert(*store, Sweep());
  ASSERT_EQ(Claim(*store, b_, x1_, t0, absl::Seconds(10)), silent);
  // a heartbeats at 12 s without the job (its end could not be stored); b fell silent at 4 s.
  ASSERT_TRUE(store->Heartbeat("a", {""}, t0 + absl::Seconds(12), t0 + absl::Seconds(22)).ok());
  ASSERT_TRUE(store->Heartbeat("b", {}, t0 + absl::Seconds(4), t0 + absl::Seconds(14)).ok());
  absl::StatusOr<std::vector<ExpiredLease>> expired =
      store->RequeueExpired(1, t0 + absl::Seconds(12.5));
  ASSERT_TRUE(expired.ok()) << expired.status();
  ASSERT_EQ(expired->size(), 2u);
  EXPECT_EQ((*expired)[0].reason,
            "its lease, held by a, expired 2.5 s ago without renewal (that daemon still "
            "heartbeats, 0.5 s ago, but did not renew this job)");
  EXPECT_EQ((*expired)[1].reason,
            "its lease, held by b, expired 2.5 s ago without renewal (that daemon's last "
            "heartbeat was 8.5 s ago)");
  absl::StatusOr<v1::Job> job = store->Get(silent);
  ASSERT_TRUE(job.ok());
  EXPECT_THAT(job->error_message(), testing::Not(HasSubstr("stopped")));

  const std::string stopped = Insert(*store, Sweep());
  ASSERT_EQ(Claim(*store, b_, x1_, t0 + absl::Seconds(13), absl::Seconds(10)), stopped);
  ASSERT_TRUE(store->Unregister("b").ok());
  expired = store->RequeueExpired(1, t0 + absl::Seconds(14));
  ASSERT_TRUE(expired.ok());
  ASSERT_EQ(expired->size(), 1u);
  EXPECT_EQ(expired->front().reason, "its gpuprobed b stopped while the job ran");
}

// A daemon restarted on its host (a new id, the same device) takes its old entry's place; a
// daemon of another device of the host stays.
TEST_P(JobStoreContractTest, ARestartedDaemonReplacesItsHostsEntryForTheSameDevice) {
  std::unique_ptr<JobStore> store = Open();
  const absl::Time t0 = absl::Now();
  const DeviceRegistration gpu1{.index = 1, .model = "X", .description = "x"};
  ASSERT_TRUE(store->Register(a_, t0).ok());
  ASSERT_TRUE(store->Register({.daemon_id = "a-gpu1", .host = "h1", .devices = {gpu1}}, t0).ok());
  ASSERT_TRUE(store->Register({.daemon_id = "a2", .host = "h1", .devices = {cpu0_}}, t0).ok());
  absl::StatusOr<std::vector<v1::FleetDevice>> fleet =
      store->FleetDevices(t0 + absl::Seconds(1), absl::Seconds(10));
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  std::vector<std::string> daemons;
  for (const v1::FleetDevice& d : *fleet) daemons.push_back(d.daemon_id());
  EXPECT_THAT(daemons, testing::UnorderedElementsAre("a2", "a-gpu1"));
}

// Another daemon hears a queued job as such (idle devices look for it) and a stored event as
// news of its job alone (only that job's watchers read the store): an event is no reason to
// look for work.
TEST_P(SharedStoreContractTest, AnnouncementsTellQueuedJobsFromEventsOfOneJob) {
  std::unique_ptr<JobStore> writer = Open(), listener = Open();
  ASSERT_TRUE(writer->Register(a_, absl::Now()).ok());
  // Until all is read: what `listener` hears as daemon a, merged.
  auto heard = [&]() {
    StoreChanges all;
    for (absl::StatusOr<StoreChanges> c = listener->AwaitChanges(absl::Seconds(5), "a");
         c.ok() && !c->empty(); c = listener->AwaitChanges(absl::Milliseconds(300), "a")) {
      all.queued |= c->queued;
      all.every_job |= c->every_job;
      all.job_ids.insert(c->job_ids.begin(), c->job_ids.end());
    }
    return all;
  };
  const std::string id = Insert(*writer, Sweep());
  StoreChanges inserted = heard();
  EXPECT_TRUE(inserted.queued);
  EXPECT_THAT(inserted.job_ids, testing::ElementsAre(id)) << "its first event";

  const absl::Time t0 = absl::Now();
  ASSERT_EQ(Claim(*writer, a_, cpu0_, t0, absl::Seconds(1)), id);
  ASSERT_TRUE(writer->AppendEvent(id, Result(1)).ok());
  StoreChanges event = heard();
  EXPECT_FALSE(event.queued) << "an event queues nothing";
  EXPECT_FALSE(event.every_job);
  EXPECT_THAT(event.job_ids, testing::ElementsAre(id));

  EXPECT_THAT(QueuedAgain(writer->RequeueExpired(2, t0 + absl::Seconds(2))),
              testing::ElementsAre(id));
  EXPECT_TRUE(heard().queued) << "a job queued again";
}

// A queued job is announced to a few daemons that may run it, idle ones first (the freshest
// heartbeat first), not to the whole fleet: each daemon woken costs the store a claim.
TEST_P(SharedStoreContractTest, AQueuedJobWakesAFewIdleDaemonsThatMayRunItNotTheFleet) {
  std::unique_ptr<JobStore> writer = Open();
  constexpr int kDaemons = 4;
  std::vector<DaemonRegistration> daemons;
  std::vector<std::unique_ptr<JobStore>> listeners;
  const absl::Time t0 = absl::Now();
  for (int i = 0; i < kDaemons; ++i) {
    daemons.push_back(
        {.daemon_id = absl::StrCat("d", i), .host = absl::StrCat("h", i), .devices = {cpu0_}});
    ASSERT_TRUE(writer->Register(daemons.back(), t0 + absl::Seconds(i)).ok());
    listeners.push_back(Open());
  }
  // The daemons that hear `job` queued: those expected first (announcements come at commit, in
  // order), then whether any other does.
  auto woken = [&](const std::vector<int>& expected) {
    std::set<int> heard;
    for (int i = 0; i < kDaemons; ++i) {
      const bool named = std::find(expected.begin(), expected.end(), i) != expected.end();
      const absl::Duration wait = named ? absl::Seconds(5) : absl::Milliseconds(300);
      for (absl::StatusOr<StoreChanges> c = listeners[i]->AwaitChanges(wait, daemons[i].daemon_id);
           c.ok() && !c->empty();
           c = listeners[i]->AwaitChanges(absl::Milliseconds(100), daemons[i].daemon_id)) {
        if (c->queued) heard.insert(i);
      }
    }
    return heard;
  };
  const std::string first = Insert(*writer, Sweep());
  EXPECT_THAT(woken({3, 2}), testing::UnorderedElementsAre(3, 2)) << "the two freshest";

  // d3 runs it: busy, it is passed over for the next job.
  ASSERT_EQ(Claim(*writer, daemons[3], cpu0_, t0 + absl::Seconds(5)), first);
  EXPECT_THAT(woken({}), testing::IsEmpty()) << "nothing queued behind the claimed job";
  const std::string second = Insert(*writer, Sweep());
  EXPECT_THAT(woken({2, 1}), testing::UnorderedElementsAre(2, 1));

  // Its job ended, d3 is idle again, and the freshest.
  ASSERT_TRUE(writer->MarkFinished(first, 1, Finished(1), t0 + absl::Seconds(6)).ok());
  Insert(*writer, Sweep());
  EXPECT_THAT(woken({3, 2}), testing::UnorderedElementsAre(3, 2));

  // A claim that leaves jobs queued announces the next one again: its first claimants may be
  // busy by now.
  ASSERT_EQ(Claim(*writer, daemons[2], cpu0_, t0 + absl::Seconds(7)), second);
  EXPECT_THAT(woken({3, 1}), testing::UnorderedElementsAre(3, 1));

  // A job for one host wakes that host's daemon alone.
  Insert(*writer, Sweep(0, "", "h0"));
  EXPECT_THAT(woken({0}), testing::ElementsAre(0));
}

TEST_P(SharedStoreContractTest, HeartbeatsRenewLeasesAndCarryCancelRequestsToTheRunningDaemon) {
  std::unique_ptr<JobStore> runner = Open(), other = Open();
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(runner->Register(a_, t0).ok());
  const std::string id = Insert(*other, Sweep());
  ASSERT_EQ(Claim(*runner, a_, cpu0_, t0, absl::Seconds(10)), id);
  absl::StatusOr<std::vector<std::string>> cancels =
      runner->Heartbeat("a", {id}, t0 + absl::Seconds(8), t0 + absl::Seconds(18));
  ASSERT_TRUE(cancels.ok()) << cancels.status();
  EXPECT_TRUE(cancels->empty());
  absl::StatusOr<std::vector<ExpiredLease>> requeued =
      other->RequeueExpired(2, t0 + absl::Seconds(12));
  ASSERT_TRUE(requeued.ok());
  EXPECT_TRUE(requeued->empty()) << "the renewed lease holds";

  ASSERT_TRUE(other->RequestCancel(id).ok());
  cancels = runner->Heartbeat("a", {id}, t0 + absl::Seconds(9), t0 + absl::Seconds(19));
  ASSERT_TRUE(cancels.ok());
  EXPECT_THAT(*cancels, testing::ElementsAre(id));
  EXPECT_EQ(runner->Heartbeat("nobody", {}, t0, t0).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(JobStoreContractTest, ABeatRenewsSweepsAndTestsAWriteAndKeepsItsRenewalWhenTheWriteFails) {
  // Issue 55, item 9: a heartbeat was 3 transactions (renewal, test write, expired leases).
  std::unique_ptr<JobStore> store = Open();
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(store->Register(a_, t0).ok());
  ASSERT_TRUE(store->Register(b_, t0).ok());
  const std::string mine = Insert(*store, Sweep());
  ASSERT_EQ(Claim(*store, a_, cpu0_, t0, absl::Seconds(10)), mine);
  const std::string theirs = Insert(*store, Sweep());
  ASSERT_EQ(Claim(*store, b_, x1_, t0, absl::Seconds(5)), theirs);
  ASSERT_TRUE(store->RequestCancel(mine).ok());
  absl::StatusOr<JobStore::Beat> beat =
      store->HeartbeatAndSweep("a", {mine}, t0 + absl::Seconds(8), t0 + absl::Seconds(18), 2);
  ASSERT_TRUE(beat.ok()) << beat.status();
  EXPECT_THAT(beat->cancels, testing::ElementsAre(mine));
  EXPECT_TRUE(beat->writable.ok()) << beat->writable;
  EXPECT_THAT(QueuedAgain(beat->expired), testing::ElementsAre(theirs)) << "b's lease ran out";

  // A test write that fails (its table gone) is reported; the renewal stands.
  ASSERT_TRUE(Raw()->Exec("DROP TABLE write_probe").ok());
  beat = store->HeartbeatAndSweep("a", {mine}, t0 + absl::Seconds(17), t0 + absl::Seconds(40), 2);
  ASSERT_TRUE(beat.ok()) << beat.status();
  EXPECT_FALSE(beat->writable.ok());
  absl::StatusOr<std::vector<ExpiredLease>> later =
      store->RequeueExpired(2, t0 + absl::Seconds(30));
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_TRUE(later->empty()) << "the lease renewed to t0 + 40 s holds";
  EXPECT_EQ(store->HeartbeatAndSweep("nobody", {}, t0, t0, 2).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_P(JobStoreContractTest, OnlyAQueuedJobIsCancelledInTheStore) {
  std::unique_ptr<JobStore> store = Open();
  const std::string queued = Insert(*store, Sweep()), running = Insert(*store, Sweep(-1));
  ASSERT_EQ(Claim(*store, a_, cpu0_, absl::Now()), queued);
  v1::JobEvent cancelled;
  cancelled.mutable_finished()->set_state(v1::JOB_STATE_CANCELLED);
  cancelled.mutable_finished()->set_error_message("cancelled while queued");
  absl::StatusOr<bool> no = store->CancelQueued(queued, cancelled, absl::Now());
  absl::StatusOr<bool> yes = store->CancelQueued(running, cancelled, absl::Now());
  ASSERT_TRUE(no.ok() && yes.ok());
  EXPECT_FALSE(*no);
  EXPECT_TRUE(*yes);
  absl::StatusOr<v1::Job> job = store->Get(running);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(job->error_message(), "cancelled while queued");
}

TEST_P(JobStoreContractTest, TheRegistryShowsLostDaemonsAndAGoodbyeReleasesItsLeases) {
  std::unique_ptr<JobStore> store = Open();
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(store->Register(a_, t0).ok());
  ASSERT_TRUE(store->Register(b_, t0).ok());
  const std::string id = Insert(*store, Sweep());
  ASSERT_EQ(Claim(*store, b_, x1_, t0), id);
  ASSERT_TRUE(store->Heartbeat("b", {"", id}, t0 + absl::Seconds(20), t0 + absl::Seconds(50)).ok());
  absl::StatusOr<std::vector<v1::FleetDevice>> fleet =
      store->FleetDevices(t0 + absl::Seconds(25), absl::Seconds(10));
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  ASSERT_EQ(fleet->size(), 2u);
  EXPECT_EQ((*fleet)[0].host(), "h1");
  EXPECT_EQ((*fleet)[0].state(), "lost");
  EXPECT_EQ((*fleet)[1].host(), "h2");
  EXPECT_EQ((*fleet)[1].model(), "X");
  EXPECT_EQ((*fleet)[1].state(), "serving");
  EXPECT_EQ((*fleet)[1].running_job_id(), id);
  EXPECT_DOUBLE_EQ((*fleet)[1].calibrated_read_tbps(), 3.0);

  ASSERT_TRUE(store->Unregister("b").ok());
  EXPECT_THAT(QueuedAgain(store->RequeueExpired(2, t0 + absl::Seconds(26))),
              testing::ElementsAre(id))
      << "its lease ended with the goodbye";
  fleet = store->FleetDevices(t0 + absl::Seconds(26), absl::Seconds(10));
  ASSERT_TRUE(fleet.ok());
  EXPECT_EQ(fleet->size(), 1u);

  // Daemon a took a job and went silent: lost, its device is never shown busy with the job
  // (whose lease lapses), and after 10 minutes without a heartbeat it is forgotten.
  const std::string taken = Claim(*store, a_, cpu0_, t0 + absl::Seconds(27));
  ASSERT_FALSE(taken.empty());
  ASSERT_TRUE(store->Heartbeat("a", {taken}, t0 + absl::Seconds(27), t0 + absl::Seconds(57)).ok());
  fleet = store->FleetDevices(t0 + absl::Seconds(60), absl::Seconds(10));
  ASSERT_TRUE(fleet.ok());
  ASSERT_EQ(fleet->size(), 1u);
  EXPECT_EQ((*fleet)[0].state(), "lost");
  EXPECT_EQ((*fleet)[0].running_job_id(), "");
  ASSERT_TRUE(store->RequeueExpired(2, t0 + absl::Minutes(9)).ok());
  fleet = store->FleetDevices(t0 + absl::Minutes(9), absl::Seconds(10));
  ASSERT_TRUE(fleet.ok());
  EXPECT_EQ(fleet->size(), 1u) << "still listed, lost, within 10 minutes";
  ASSERT_TRUE(store->RequeueExpired(2, t0 + absl::Minutes(11)).ok());
  fleet = store->FleetDevices(t0 + absl::Minutes(11), absl::Seconds(10));
  ASSERT_TRUE(fleet.ok());
  EXPECT_THAT(*fleet, testing::IsEmpty()) << "forgotten 10 minutes after its last heartbeat";
}

TEST_P(JobStoreContractTest, ListPagesNewestFirstWithFiltersAndRefusesBadOnesNamingTheField) {
  std::unique_ptr<JobStore> store = Open();
  for (int i = 0; i < 5; ++i) {
    v1::SubmitRequest r = Sweep();
    (*r.mutable_sweep()->mutable_labels())["run"] = i % 2 == 0 ? "even" : "odd";
    Insert(*store, r);
  }
  v1::ListJobsRequest page;
  page.set_page_size(2);
  (*page.mutable_labels())["run"] = "even";
  absl::StatusOr<v1::ListJobsResponse> first = store->List(page);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->jobs_size(), 2);
  EXPECT_EQ(first->jobs(0).id(), "job-5");
  EXPECT_EQ(first->jobs(1).id(), "job-3");
  page.set_page_token(first->next_page_token());
  absl::StatusOr<v1::ListJobsResponse> second = store->List(page);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->jobs_size(), 1);
  EXPECT_EQ(second->jobs(0).id(), "job-1");
  EXPECT_TRUE(second->next_page_token().empty());

  v1::ListJobsRequest states;
  states.add_states(static_cast<v1::JobState>(99));
  EXPECT_THAT(store->List(states).status().message(), HasSubstr("states"));
  v1::ListJobsRequest token;
  token.set_page_token("-5");
  EXPECT_THAT(store->List(token).status().message(), HasSubstr("page_token"));
  v1::ListJobsRequest labels;
  for (int i = 0; i < 999; ++i) (*labels.mutable_labels())[std::to_string(i)] = "v";
  absl::Status many = store->List(labels).status();
  EXPECT_EQ(many.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(many.message(), HasSubstr("labels"));
  EXPECT_THAT(many.message(), testing::Not(HasSubstr("SELECT")));
}

TEST_P(JobStoreContractTest, ACorruptRequestFailsItsJobOnlyAndTheQueueMovesOn) {
  std::unique_ptr<JobStore> store = Open();
  const std::string corrupt = Insert(*store, Sweep()), sound = Insert(*store, Sweep());
  Damage("request", corrupt, "\xff\xff\xff\xff\x0f");
  absl::StatusOr<v1::ListJobsResponse> list = store->List(v1::ListJobsRequest());
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->jobs_size(), 2);
  EXPECT_EQ(list->jobs(1).state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(list->jobs(1).error_code(), static_cast<int>(absl::StatusCode::kDataLoss));
  EXPECT_EQ(Claim(*store, a_, cpu0_, absl::Now()), sound);
  absl::StatusOr<v1::Job> failed = store->Get(corrupt);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(Claim(*store, a_, cpu0_, absl::Now()), "") << "quarantined, never claimed";
}

TEST_P(JobStoreContractTest, ADamagedTelemetrySummaryIsSaidToBeDamagedAndTheJobStaysReadable) {
  std::unique_ptr<JobStore> store = Open();
  const std::string id = Insert(*store, Sweep());
  Damage("telemetry", id, "\xff\xff\xff\xff\x0f");
  absl::StatusOr<v1::Job> job = store->Get(id);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::JOB_STATE_QUEUED);
  EXPECT_FALSE(job->telemetry().available());
  EXPECT_THAT(job->telemetry().note(), HasSubstr("damaged record"));
}

INSTANTIATE_TEST_SUITE_P(BothStores, JobStoreContractTest, testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Shared, SharedStoreContractTest, testing::Values("postgresql"),
                         [](const auto& info) { return info.param; });

TEST(StoreUrlTest, BadUrlsAndAnUnreachableDatabaseNameTheFlag) {
  EXPECT_THAT(ParseStoreUrl("mysql://x", "/d").status().message(), HasSubstr("--store"));
  EXPECT_THAT(ParseStoreUrl("sqlite://relative.db", "/d").status().message(), HasSubstr("--store"));
  absl::StatusOr<StoreUrl> default_url = ParseStoreUrl("", "/d");
  ASSERT_TRUE(default_url.ok());
  EXPECT_EQ(default_url->target, "/d/gpuprobe.sqlite");
  absl::StatusOr<StoreUrl> away =
      ParseStoreUrl("postgresql://me:secret@127.0.0.1:1/none?connect_timeout=2", "/d");
  ASSERT_TRUE(away.ok());
  absl::StatusOr<std::unique_ptr<JobStore>> store = OpenStore(*away, 0);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(store.status().message(), HasSubstr("--store postgresql://me:***@127.0.0.1:1"));
  EXPECT_THAT(store.status().message(), testing::Not(HasSubstr("secret")));
}

TEST(StoreUrlTest, LibpqReadsTheUrlItsPasswordIsNeverShownAndAnUnreadableOneIsRefused) {
  // As libpq reads it: the password masked wherever it was given.
  EXPECT_EQ(MaskedUrl("postgresql://me:secret@db.example:5433/fleet?connect_timeout=2"),
            "postgresql://me:***@db.example:5433/fleet?connect_timeout=2");
  EXPECT_EQ(MaskedUrl("postgres:///postgres?host=/run/pg&user=gp&password=secret"),
            "postgresql://gp:***@/postgres?host=/run/pg");
  EXPECT_EQ(MaskedUrl("sqlite:///var/lib/gpuprobed/jobs.db"),
            "sqlite:///var/lib/gpuprobed/jobs.db");
  // An unreadable URL is refused before anything connects, with libpq's reason and no secret.
  for (const std::string bad : {"postgresql://me:secret@[::1/db", "postgresql://h/db?nosuch=1"}) {
    absl::StatusOr<StoreUrl> refused = ParseStoreUrl(bad, "/d");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(refused.status().message(), HasSubstr("--store: "));
    EXPECT_THAT(refused.status().message(), HasSubstr("libpq"));
    EXPECT_THAT(refused.status().message(), testing::Not(HasSubstr("secret")));
  }
}

}  // namespace
}  // namespace gpuprobe
