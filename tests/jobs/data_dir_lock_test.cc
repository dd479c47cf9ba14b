#include "server/jobs/data_dir_lock.h"

#include <stdlib.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;

TEST(DataDirLockTest, ASecondHolderIsRefusedNamingTheDirectoryAndThePid) {
  const testing_support::ScopedTempDir temp("gpuprobe_lock");
  const std::string& dir = temp.path();
  absl::StatusOr<DataDirLock> first = DataDirLock::Acquire(dir);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<DataDirLock> second = DataDirLock::Acquire(dir);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr(dir));
  EXPECT_THAT(second.status().message(), HasSubstr(absl::StrCat("pid ", getpid())));
}

TEST(DataDirLockTest, TheLockIsFreeAgainOnceReleased) {
  const testing_support::ScopedTempDir temp("gpuprobe_lock");
  const std::string& dir = temp.path();
  { ASSERT_TRUE(DataDirLock::Acquire(dir).ok()); }
  EXPECT_TRUE(DataDirLock::Acquire(dir).ok());
}

TEST(DataDirLockTest, ASymbolicLinkInPlaceOfTheLockFileIsNotFollowed) {
  const testing_support::ScopedTempDir temp("gpuprobe_lock");
  const std::string& dir = temp.path();
  const std::string target = dir + "/elsewhere";
  ASSERT_EQ(symlink(target.c_str(), (dir + "/gpuprobed.lock").c_str()), 0);
  EXPECT_FALSE(DataDirLock::Acquire(dir).ok());
  EXPECT_NE(access(target.c_str(), F_OK), 0) << "the lock was created through the link";
}

}  // namespace
}  // namespace gpuprobe
