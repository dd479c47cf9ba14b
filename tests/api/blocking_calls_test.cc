#include "server/api/blocking_calls.h"

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

TEST(BlockingCallsTest, RunsCallsOnItsOwnThreads) {
  std::thread::id ran_on;
  absl::Notification done;
  {
    BlockingCalls calls(2, 4);
    ASSERT_TRUE(calls.Schedule([&] {
      ran_on = std::this_thread::get_id();
      done.Notify();
    }));
    done.WaitForNotification();
  }
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(BlockingCallsTest, RefusesACallOnceMaxWaitingWaitAndRunsTheRestAtTheEnd) {
  absl::Notification release;
  std::atomic<int> ran{0};
  {
    BlockingCalls calls(1, 2);
    absl::Notification running;
    // The one thread is held; two more wait; the fourth is refused.
    ASSERT_TRUE(calls.Schedule([&] {
      running.Notify();
      release.WaitForNotification();
      ++ran;
    }));
    running.WaitForNotification();
    ASSERT_TRUE(calls.Schedule([&] { ++ran; }));
    ASSERT_TRUE(calls.Schedule([&] { ++ran; }));
    EXPECT_FALSE(calls.Schedule([&] { ran += 100; }));
    EXPECT_EQ(calls.Busy().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(std::string(calls.Busy().message()), testing::HasSubstr("2 calls already wait"));
    release.Notify();
  }  // the destructor runs what waits, then joins
  EXPECT_EQ(ran.load(), 3);
}

}  // namespace
}  // namespace gpuprobe
