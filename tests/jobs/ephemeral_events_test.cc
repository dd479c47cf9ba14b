// Which progress and telemetry events are stored: the first, the last rep's progress, the
// disturbed readings and one every 2 s; every other kind of event always.
#include "server/jobs/ephemeral_events.h"

#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

v1::JobEvent Progress(uint32_t done, uint32_t total) {
  v1::JobEvent e;
  e.mutable_progress()->set_reps_done(done);
  e.mutable_progress()->set_reps_total(total);
  return e;
}

v1::JobEvent Reading(bool disturbed) {
  v1::JobEvent e;
  e.mutable_telemetry()->set_sm_mhz(1980);
  if (disturbed) e.mutable_telemetry()->add_throttle_reasons("sw_power_cap");
  return e;
}

TEST(EphemeralEventsTest, ProgressIsStoredFirstLastAndEveryTwoSeconds) {
  EphemeralEvents ephemeral;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  int stored = 0;
  for (uint32_t rep = 1; rep <= 1000; ++rep) {  // a rep every 10 ms: 10 s
    stored += ephemeral.Store(Progress(rep, 1000), t0 + rep * absl::Milliseconds(10));
  }
  // Reps 1, 201, 401, 601, 801 (2 s apart) and 1000, the last.
  EXPECT_EQ(stored, 6);
}

TEST(EphemeralEventsTest, TelemetryIsStoredFirstWhenDisturbedAndEveryTwoSeconds) {
  EphemeralEvents ephemeral;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  EXPECT_TRUE(ephemeral.Store(Reading(false), t0));
  EXPECT_FALSE(ephemeral.Store(Reading(false), t0 + absl::Milliseconds(500)));
  EXPECT_TRUE(ephemeral.Store(Reading(true), t0 + absl::Milliseconds(600)));
  EXPECT_TRUE(ephemeral.Store(Reading(true), t0 + absl::Milliseconds(700)));
  EXPECT_FALSE(ephemeral.Store(Reading(false), t0 + absl::Milliseconds(2600)));
  EXPECT_TRUE(ephemeral.Store(Reading(false), t0 + absl::Milliseconds(2700)));
}

TEST(EphemeralEventsTest, EveryOtherEventIsStored) {
  EphemeralEvents ephemeral;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  v1::JobEvent row, finished, result;
  row.mutable_row()->set_arm_index(1);
  finished.mutable_finished()->set_state(v1::JOB_STATE_SUCCEEDED);
  result.mutable_result()->set_job_id("job-1");
  for (const v1::JobEvent& e : {row, row, result, finished}) EXPECT_TRUE(ephemeral.Store(e, t0));
}

}  // namespace
}  // namespace gpuprobe
