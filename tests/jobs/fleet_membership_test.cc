// FleetMembership registers the daemon's devices, hears a cancel asked through another daemon
// at its heartbeat, reports the store's answer at every beat, and leaves the registry.
#include "server/jobs/fleet_membership.h"

#include <stdlib.h>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/sqlite_job_store.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

TEST(FleetMembershipTest, RegistersHearsARemoteCancelAtItsHeartbeatAndLeaves) {
  const testing_support::ScopedTempDir temp("gpuprobe_fleet");
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(temp.path() + "/jobs.db");
  ASSERT_TRUE(store.ok()) << store.status();
  const DeviceRegistration device{.index = 0, .model = "cpu", .description = "cpu (test)"};
  FleetMembership fleet(**store, {.host = "probe-host", .heartbeat = absl::Milliseconds(10)},
                        {device},
                        /*max_attempts=*/2);
  EXPECT_THAT(fleet.registration().daemon_id, testing::StartsWith("probe-host/"));

  // A job this daemon runs on device 0.
  v1::SubmitRequest request;
  request.mutable_sweep()->set_reps(3);
  ASSERT_TRUE((*store)
                  ->Insert(NewJob{.request = request}, "tester", "", absl::Now(),
                           [](const v1::Job& j) {
                             v1::JobEvent e;
                             e.mutable_accepted()->set_job_id(j.id());
                             return e;
                           })
                  .ok());
  absl::Notification cancelled;
  std::string cancelled_id;
  absl::Mutex mu;
  std::string running;  // read by the heartbeat's thread
  int answers = 0, refusals = 0;
  ASSERT_TRUE(fleet
                  .Join({.running =
                             [&] {
                               absl::MutexLock lock(&mu);
                               return std::vector<std::string>{running};
                             },
                         .cancel =
                             [&](const std::string& id) {
                               if (cancelled.HasBeenNotified()) return;
                               cancelled_id = id;
                               cancelled.Notify();
                             },
                         .store_health =
                             [&](const absl::Status& answer) {
                               absl::MutexLock lock(&mu);
                               ++answers;
                               refusals += answer.ok() ? 0 : 1;
                             }})
                  .ok());
  absl::StatusOr<std::vector<v1::FleetDevice>> devices = fleet.Devices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].daemon_id(), fleet.registration().daemon_id);
  EXPECT_EQ((*devices)[0].host(), "probe-host");

  const absl::Time now = absl::Now();
  absl::StatusOr<std::optional<JobStore::Claimed>> claimed =
      (*store)->ClaimNext(fleet.registration(), device, now, now + absl::Seconds(30));
  ASSERT_TRUE(claimed.ok() && claimed->has_value()) << claimed.status();
  const std::string job_id = (**claimed).job.id();
  {
    absl::MutexLock lock(&mu);
    running = job_id;
  }
  // Another daemon of the fleet asks for the cancel through the store.
  ASSERT_TRUE((*store)->RequestCancel(job_id).ok());
  ASSERT_TRUE(cancelled.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(cancelled_id, job_id);

  fleet.Leave();
  {
    absl::MutexLock lock(&mu);
    EXPECT_GE(answers, 1) << "the store's answer at every heartbeat";
    EXPECT_EQ(refusals, 0);
  }
  devices = fleet.Devices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_THAT(*devices, testing::IsEmpty());
}

}  // namespace
}  // namespace gpuprobe
