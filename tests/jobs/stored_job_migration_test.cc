// A job store written by the previous release (schema 5: requests without a resolved spec)
// opened by this one: the schema migrates, the old jobs get their resolved spec once, and they
// still show and compare.
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu_backend.h"
#include "server/jobs/job_comparison.h"
#include "server/jobs/job_manager.h"
#include "server/store/sqlite_job_store.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

using ::testing::ElementsAre;

class StoredJobMigrationTest : public ::testing::Test {
 protected:
  testing_support::ScopedTempDir temp_{"gpuprobe_migration"};  // removed last

  void SetUp() override {
    dir_ = temp_.path();
    ASSERT_EQ(sqlite3_open((dir_ + "/jobs.db").c_str(), &db_), SQLITE_OK);
    std::ifstream schema(SCHEMA_V5_PATH);
    std::stringstream sql;
    sql << schema.rdbuf();
    Exec(sql.str());
  }
  void TearDown() override {
    if (db_ != nullptr) sqlite3_close(db_);
    std::filesystem::remove_all(dir_);
  }
  void Exec(const std::string& sql) {
    char* error = nullptr;
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << (error != nullptr ? error : "");
  }
  // Stores a job as the previous release did: its request, its state, its events.
  void StoreOldJob(int seq, const v1::SubmitRequest& request,
                   const std::vector<v1::JobEvent>& events) {
    sqlite3_stmt* job = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db_,
                                 "INSERT INTO jobs (seq, id, state, request, created_us, device, "
                                 "attempts, results, next_event) VALUES (?1, ?2, 1, ?3, ?4, "
                                 "'cpu (reference kernels)', 1, ?5, ?6)",
                                 -1, &job, nullptr),
              SQLITE_OK);
    const std::string id = "job-" + std::to_string(seq);
    const std::string blob = request.SerializeAsString();
    sqlite3_bind_int(job, 1, seq);
    sqlite3_bind_text(job, 2, id.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_blob(job, 3, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(job, 4, 1'700'000'000'000'000 + seq);
    sqlite3_bind_int(job, 5, static_cast<int>(events.size()));
    sqlite3_bind_int(job, 6, static_cast<int>(events.size()));
    ASSERT_EQ(sqlite3_step(job), SQLITE_DONE);
    sqlite3_finalize(job);
    const auto& labels = request.has_sweep() ? request.sweep().labels() : request.check().labels();
    for (const auto& [key, value] : labels) {
      Exec("INSERT INTO job_labels (job_seq, key, value) VALUES (" + std::to_string(seq) + ", '" +
           key + "', '" + value + "')");
    }
    for (size_t i = 0; i < events.size(); ++i) {
      sqlite3_stmt* event = nullptr;
      ASSERT_EQ(
          sqlite3_prepare_v2(db_, "INSERT INTO events (job_seq, seq, event) VALUES (?1, ?2, ?3)",
                             -1, &event, nullptr),
          SQLITE_OK);
      const std::string e = events[i].SerializeAsString();
      sqlite3_bind_int(event, 1, seq);
      sqlite3_bind_int(event, 2, static_cast<int>(i));
      sqlite3_bind_blob(event, 3, e.data(), static_cast<int>(e.size()), SQLITE_TRANSIENT);
      ASSERT_EQ(sqlite3_step(event), SQLITE_DONE);
      sqlite3_finalize(event);
    }
  }
  std::unique_ptr<JobManager> Start() {
    sqlite3_close(db_);
    db_ = nullptr;
    absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(dir_ + "/jobs.db");
    EXPECT_TRUE(store.ok()) << store.status();
    auto probes = std::make_shared<const ProbeRegistry>(ProbeRegistry::Builtin({}).value());
    std::vector<std::unique_ptr<DeviceExecutor>> executors;
    executors.push_back(std::make_unique<InProcessExecutor>(std::make_unique<CpuBackend>()));
    absl::StatusOr<std::unique_ptr<JobManager>> manager =
        JobManager::Start(*std::move(store), std::move(executors), QueueLimits{}, probes);
    EXPECT_TRUE(manager.ok()) << manager.status();
    return manager.ok() ? *std::move(manager) : nullptr;
  }

  std::string dir_;
  sqlite3* db_ = nullptr;
};

// A succeeded sweep's events, with one row of 12 kept samples near `gu_us`.
std::vector<v1::JobEvent> SweepEvents(double gu_us) {
  v1::JobEvent row;
  row.set_attempt(1);
  v1::Row* r = row.mutable_row();
  r->mutable_arm()->set_variant(v1::KERNEL_VARIANT_PER_SLOT);
  r->mutable_arm()->set_t(2);
  r->mutable_arm()->set_slots(8);
  r->mutable_arm()->set_union_size(8);
  r->set_kept_reps(12);
  for (int i = 0; i < 12; ++i) {
    r->add_gu_samples_us(gu_us + 0.01 * i);
    r->add_down_samples_us(10.0 + 0.01 * i);
  }
  r->set_gu_us(gu_us + 0.055);
  r->set_down_us(10.055);
  r->set_section_us(r->gu_us() + r->down_us());
  v1::JobEvent finished;
  finished.set_attempt(1);
  finished.mutable_finished()->set_state(v1::JOB_STATE_SUCCEEDED);
  finished.mutable_finished()->set_rows(1);
  return {row, finished};
}

TEST_F(StoredJobMigrationTest, OldJobsGetTheirResolvedSpecOnceAndStillShowAndCompare) {
  v1::SubmitRequest sweep;  // the previous release's defaults, all but four fields
  sweep.mutable_sweep()->mutable_geometry()->set_experts(16);
  sweep.mutable_sweep()->mutable_geometry()->set_hidden(64);
  sweep.mutable_sweep()->mutable_geometry()->set_ff(32);
  sweep.mutable_sweep()->mutable_geometry()->set_selected(4);
  sweep.mutable_sweep()->add_t_values(2);
  (*sweep.mutable_sweep()->mutable_labels())["branch"] = "main";
  StoreOldJob(1, sweep, SweepEvents(20.0));
  StoreOldJob(2, sweep, SweepEvents(40.0));
  v1::SubmitRequest check;
  check.mutable_check()->set_seed(7);
  StoreOldJob(3, check, {});

  std::unique_ptr<JobManager> manager = Start();
  ASSERT_NE(manager, nullptr);
  absl::StatusOr<v1::Job> job = manager->Get("job-1");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->probe(), "moe-union");
  EXPECT_FALSE(job->check());
  EXPECT_EQ(job->request().sweep().labels().at("branch"), "main");  // as submitted
  v1::SweepRequest resolved;
  ASSERT_TRUE(job->resolved().UnpackTo(&resolved));
  EXPECT_EQ(resolved.geometry().experts(), 16u);
  EXPECT_EQ(resolved.geometry().ff(), 32u);
  EXPECT_THAT(resolved.t_values(), ElementsAre(2u));
  EXPECT_EQ(resolved.reps(), 20u);  // the default filled in, stored from now on
  EXPECT_EQ(resolved.seed(), 1u);

  absl::StatusOr<v1::Job> old_check = manager->Get("job-3");
  ASSERT_TRUE(old_check.ok());
  EXPECT_TRUE(old_check->check());
  v1::CheckRequest resolved_check;
  ASSERT_TRUE(old_check->resolved().UnpackTo(&resolved_check));
  EXPECT_EQ(resolved_check.seed(), 7u);

  v1::CompareJobsRequest compare;
  compare.set_base("job-1");
  compare.set_candidate("job-2");
  absl::StatusOr<v1::CompareJobsResponse> r = CompareJobs(*manager, compare);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->arms_size(), 1);
  EXPECT_EQ(r->arms(0).verdict(), v1::VERDICT_SLOWER);
  EXPECT_EQ(r->slower(), 1u);
  compare.set_base("label:branch=main");
  r = CompareJobs(*manager, compare);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->base_job_id(), "job-1");
  // Its stored row reads as the Result moe-union reports today.
  absl::StatusOr<std::vector<v1::JobEvent>> results = manager->Results("job-1");
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 1u);
  ASSERT_TRUE(results->front().has_result());
  const v1::Result& arm = results->front().result();
  ASSERT_EQ(arm.axes_size(), 4);
  EXPECT_EQ(arm.axes(0).text_value(), "per-slot");
  EXPECT_EQ(arm.axes(3).int_value(), 8);
  ASSERT_EQ(arm.metrics_size(), 2);
  EXPECT_EQ(arm.metrics(0).name(), "gu_us");
  EXPECT_EQ(arm.metrics(0).median(), 20.055);
  EXPECT_EQ(arm.metrics(1).samples_size(), 12);
}

// Every job names its probe from schema 7 on, also an old one whose request no longer resolves
// (the migration names it, not a reader's fallback): moe-union, the only probe there was.
TEST_F(StoredJobMigrationTest, OldJobsThatNoLongerResolveStillNameTheirProbeAndKind) {
  v1::SubmitRequest sweep;
  sweep.mutable_sweep()->mutable_geometry()->set_hidden(100);  // not a multiple of 16
  StoreOldJob(1, sweep, {});
  v1::SubmitRequest check;
  check.mutable_check()->set_t(100000);  // more tokens than any check takes
  StoreOldJob(2, check, {});

  std::unique_ptr<JobManager> manager = Start();
  ASSERT_NE(manager, nullptr);
  for (const char* id : {"job-1", "job-2"}) {
    absl::StatusOr<v1::Job> job = manager->Get(id);
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->probe(), "moe-union") << id;
    EXPECT_FALSE(job->has_resolved()) << id;
  }
  EXPECT_FALSE(manager->Get("job-1")->check());
  EXPECT_TRUE(manager->Get("job-2")->check());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ + "/jobs.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* probes = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM jobs WHERE probe = 'moe-union'", -1,
                               &probes, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(probes), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(probes, 0), 2);  // the column itself, not only what a reader shows
  sqlite3_finalize(probes);
  sqlite3_close(db);
}

}  // namespace
}  // namespace gpuprobe
