#include "server/store/sqlite_job_store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/job_record.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;
using testing::Not;

class SqliteJobStoreTest : public testing::Test {
 protected:
  testing_support::ScopedTempDir temp_{"gpuprobe_store"};  // removed last

  void SetUp() override { dir_ = temp_.path(); }
  std::string DbPath() const { return dir_ + "/gpuprobe.sqlite"; }

  static v1::SubmitRequest Sweep(const std::string& key = "") {
    v1::SubmitRequest r;
    r.mutable_sweep()->set_reps(3);
    r.set_idempotency_key(key);
    return r;
  }
  static v1::JobEvent Accepted(const v1::Job& job) {
    v1::JobEvent e;
    e.mutable_accepted()->set_job_id(job.id());
    return e;
  }
  static absl::StatusOr<JobStore::Inserted> Insert(JobStore& store, const std::string& key = "",
                                                   const std::string& scope = "") {
    return store.Insert(NewJob{.request = Sweep(key)}, "tester", scope, absl::Now(), Accepted);
  }
  // Runs SQL on the database file behind the store's back.
  void Sql(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(DbPath().c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << (error != nullptr ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
  }
  std::string dir_;
};

TEST_F(SqliteJobStoreTest, ASecondStoreOnTheSameFileIsRefusedWhateverPathNamesIt) {
  absl::StatusOr<std::unique_ptr<JobStore>> first = SqliteJobStore::Open(DbPath());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(Insert(**first).ok());
  ASSERT_EQ(mkdir((dir_ + "/other").c_str(), 0700), 0);
  ASSERT_EQ(symlink(DbPath().c_str(), (dir_ + "/other/symlink.db").c_str()), 0);
  ASSERT_EQ(link(DbPath().c_str(), (dir_ + "/other/hardlink.db").c_str()), 0);
  for (const std::string& path : {DbPath(), dir_ + "/other/symlink.db", dir_ + "/other/hardlink.db",
                                  dir_ + "/other/../gpuprobe.sqlite"}) {
    absl::StatusOr<std::unique_ptr<JobStore>> second = SqliteJobStore::Open(path);
    EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << path;
    EXPECT_THAT(second.status().message(), HasSubstr("in use by another gpuprobed")) << path;
  }
  // Nothing of the first store's was touched: its job is still queued and it still writes.
  absl::StatusOr<v1::Job> job = (*first)->Get("job-1");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(Insert(**first).ok());
  first->reset();
  EXPECT_TRUE(SqliteJobStore::Open(dir_ + "/other/symlink.db").ok()) << "free once it closed";
}

TEST(CheckListRequestTest, ATimestampOutOfRangeNamesWhichPartIsWrong) {
  v1::ListJobsRequest seconds;
  seconds.mutable_created_after()->set_seconds(int64_t{1} << 40);
  EXPECT_THAT(CheckListRequest(seconds).status().message(),
              HasSubstr("s is outside 0001-01-01..9999-12-31"));
  v1::ListJobsRequest nanos;
  nanos.mutable_created_before()->set_seconds(1);
  nanos.mutable_created_before()->set_nanos(-1);
  EXPECT_THAT(CheckListRequest(nanos).status().message(),
              HasSubstr("nanos -1 is outside 0..999999999"));
}

TEST_F(SqliteJobStoreTest, AnEmptyDatabaseFileIsDamagedNotANewStore) {
  std::ofstream(DbPath()).close();
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(DbPath());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(store.status().message(), HasSubstr(DbPath()));
  EXPECT_THAT(store.status().message(), HasSubstr("move it aside"));
}

TEST_F(SqliteJobStoreTest, AStartErrorNamesTheStoreWithoutItsSql) {
  // Another program's database: its own `jobs` table stops the schema's creation.
  Sql("CREATE TABLE jobs (x INTEGER);");
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(DbPath());
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr("already exists"));
  EXPECT_THAT(store.status().message(), HasSubstr(DbPath()));
  for (const char* sql : {"PRAGMA", "CREATE", "BEGIN", "SELECT", "INSERT"}) {
    EXPECT_THAT(store.status().message(), Not(HasSubstr(sql))) << store.status();
  }
}

TEST_F(SqliteJobStoreTest, GarbageInsideTheFileFailsTheIntegrityCheckAtOpen) {
  {
    absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(DbPath());
    ASSERT_TRUE(store.ok());
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(Insert(**store).ok());
  }
  Sql("PRAGMA wal_checkpoint(TRUNCATE);");
  {
    std::fstream file(DbPath(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(4096);
    const std::string garbage(8192, '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(DbPath());
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr(DbPath()));
}

TEST_F(SqliteJobStoreTest, AWriteThatCannotBeStoredLeavesNothingAndProbeWriteSaysSo) {
  absl::StatusOr<std::unique_ptr<JobStore>> opened = SqliteJobStore::Open(DbPath(), 64 << 10);
  ASSERT_TRUE(opened.ok()) << opened.status();
  JobStore& store = **opened;
  absl::Status failed = absl::OkStatus();
  int stored = 0;
  for (int i = 0; i < 10000 && failed.ok(); ++i) {
    absl::StatusOr<JobStore::Inserted> in = Insert(store);
    if (in.ok()) {
      ++stored;
    } else {
      failed = in.status();
    }
  }
  ASSERT_FALSE(failed.ok()) << "a 64 KiB store never filled";
  EXPECT_FALSE(store.ProbeWrite().ok());
  v1::ListJobsRequest all;
  all.set_page_size(1000);
  absl::StatusOr<v1::ListJobsResponse> list = store.List(all);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->jobs_size(), std::min(stored, 1000)) << "the refused insert left a job";
}

}  // namespace
}  // namespace gpuprobe
