// Admission stores a request only after every check, within the queue's bound; it plans a
// request on this daemon's device only where the request may run here, and says when storing
// failed.
#include "server/jobs/admission.h"

#include <sqlite3.h>
#include <stdlib.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu_backend.h"
#include "server/store/sqlite_job_store.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;

class AdmissionTest : public testing::Test {
 protected:
  testing_support::ScopedTempDir temp_{"gpuprobe_admission"};  // removed last

  void SetUp() override {
    path_ = temp_.path() + "/jobs.db";
    absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(path_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  Admission Make(QueueLimits limits, const Backend* device) {
    return Admission(*store_, probes_, limits, nullptr,
                     {.writable = [this] { return writable_; },
                      .write_failed = [this](const absl::Status& why) { failed_ = why; },
                      .device_for = [device](const v1::SubmitRequest&) { return device; }});
  }

  // A read of 64 KiB, 100 reps of 10 graph launches, warm: about 0.07 s of device time at the
  // 1 GB/s the plan assumes for the cpu.
  static v1::SubmitRequest Read(const std::string& key = "") {
    v1::SubmitRequest r;
    r.mutable_probe()->set_probe("read-bandwidth");
    (*r.mutable_probe()->mutable_param_values())["sizes_bytes"] = "65536";
    (*r.mutable_probe()->mutable_param_values())["default_sizes"] = "false";
    (*r.mutable_probe()->mutable_param_values())["caches"] = "warm";
    (*r.mutable_probe()->mutable_param_values())["reps"] = "100";
    r.set_idempotency_key(key);
    return r;
  }

  std::string path_;
  std::unique_ptr<JobStore> store_;
  const ProbeRegistry probes_ = ProbeRegistry::Builtin({}).value();
  absl::Status writable_ = absl::OkStatus();
  absl::Status failed_ = absl::OkStatus();
};

TEST_F(AdmissionTest, AFullQueueRefusesAndARetriedRequestGetsItsJobBack) {
  CpuBackend cpu;
  Admission admission = Make({.max_queued_jobs = 1}, &cpu);
  absl::StatusOr<JobStore::Inserted> first = admission.Admit(Read("k"), "alice", "");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->created);
  absl::StatusOr<JobStore::Inserted> again = admission.Admit(Read("k"), "alice", "");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->job.id(), first->job.id());
  absl::StatusOr<JobStore::Inserted> second = admission.Admit(Read(), "alice", "");
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(second.status().message(), HasSubstr("queue: 1 jobs are queued"));
  EXPECT_EQ(*store_->CountQueued(), 1);
}

TEST_F(AdmissionTest, ARequestIsPlannedOnlyOnTheDeviceThatWouldRunIt) {
  CpuBackend cpu;
  const QueueLimits limits{.max_job_seconds = 0.01};
  absl::StatusOr<JobStore::Inserted> here = Make(limits, &cpu).Admit(Read(), "alice", "");
  EXPECT_EQ(here.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(here.status().message(), HasSubstr("--max-job-seconds"));
  EXPECT_EQ(*store_->CountQueued(), 0);
  // For another host: planned where it runs, so stored here.
  absl::StatusOr<JobStore::Inserted> elsewhere = Make(limits, nullptr).Admit(Read(), "alice", "");
  EXPECT_TRUE(elsewhere.ok()) << elsewhere.status();
}

TEST_F(AdmissionTest, AnUnwritableStoreRefusesBeforeAnythingIsStored) {
  CpuBackend cpu;
  writable_ = absl::ResourceExhaustedError("gpuprobed's job store cannot write (disk full)");
  absl::StatusOr<JobStore::Inserted> refused = Make({}, &cpu).Admit(Read(), "alice", "");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("disk full"));
  EXPECT_EQ(*store_->CountQueued(), 0);
  // A bad field is named before the store is asked.
  v1::SubmitRequest long_key = Read(std::string(200, 'k'));
  EXPECT_THAT(Make({}, &cpu).Admit(long_key, "alice", "").status().message(),
              HasSubstr("idempotency_key"));
}

TEST_F(AdmissionTest, IdentifiersAreOneValidationAndNothingIsStoredForABadOne) {
  // Issue 55, item 13: a host of "../x" or with a NUL was stored and stayed queued for ever.
  CpuBackend cpu;
  Admission admission = Make({}, nullptr);
  v1::SubmitRequest request = Read();
  request.set_host("../x");
  EXPECT_THAT(admission.Admit(request, "alice", "").status().message(),
              HasSubstr("host: \"../x\" is not a host name"));
  request.set_host(std::string("gpu\0host", 8));
  EXPECT_EQ(admission.Admit(request, "alice", "").status().code(),
            absl::StatusCode::kInvalidArgument);
  request.set_host("gpu-7.example_net");
  request.set_gpu(std::string("NVIDIA\0H200", 11));
  EXPECT_THAT(admission.Admit(request, "alice", "").status().message(),
              HasSubstr("gpu: holds the control character 0x00"));
  request.set_gpu("NVIDIA H200");
  request.set_idempotency_key("ci\nbuild");
  EXPECT_THAT(admission.Admit(request, "alice", "").status().message(),
              HasSubstr("idempotency_key: holds the control character 0x0a"));
  EXPECT_EQ(*store_->CountQueued(), 0);
  request.set_idempotency_key("ci-build");
  EXPECT_TRUE(admission.Admit(request, "alice", "").ok());
}

TEST_F(AdmissionTest, AQueueThatCannotBeCountedRefusesTheSubmitInsteadOfSkippingTheLimit) {
  // The jobs table taken away behind the store's back: counting the queue fails.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "ALTER TABLE jobs RENAME TO jobs_away", nullptr, nullptr, nullptr),
            SQLITE_OK);
  CpuBackend cpu;
  Admission admission = Make({.max_queued_jobs = 1}, &cpu);
  absl::StatusOr<JobStore::Inserted> refused = admission.Admit(Read(), "alice", "");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(refused.status().message(), HasSubstr("cannot count the queue"));
  ASSERT_EQ(sqlite3_exec(db, "ALTER TABLE jobs_away RENAME TO jobs", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(*store_->CountQueued(), 0);
}

}  // namespace
}  // namespace gpuprobe
