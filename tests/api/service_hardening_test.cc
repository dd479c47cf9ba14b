// The service against hostile but realistic use (issue: hardening): no file outside the
// daemon's own places, no row lost to a failing store, attempts explicit, bounded fields,
// idempotency keys per token. In process on the cpu backend (tests/api/probe_service_fixture.h).
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/api/probe_service_fixture.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;
namespace fs = std::filesystem;

class ServiceHardeningTest : public ProbeServiceTest {
 protected:
  // A small exactness job that keeps its dump; returns its finished status.
  grpc::Status CheckWithDump(std::vector<v1::JobEvent>* events) {
    v1::CheckRequest request;
    request.mutable_geometry()->set_experts(8);
    request.mutable_geometry()->set_hidden(64);
    request.mutable_geometry()->set_ff(32);
    request.mutable_geometry()->set_selected(2);
    request.set_t(2);
    request.add_variants(v1::KERNEL_VARIANT_PER_SLOT);
    request.set_dump(true);
    grpc::ClientContext context;
    auto reader = stub_->Check(&context, request);
    return ReadAll(*reader, events, nullptr);
  }

  grpc::Status Artifact(const std::string& job, const std::string& name, std::string* bytes) {
    grpc::ClientContext context;
    v1::GetArtifactRequest request;
    request.set_job_id(job);
    request.set_name(name);
    auto reader = stub_->GetArtifact(&context, request);
    v1::ArtifactChunk chunk;
    while (reader->Read(&chunk)) *bytes += chunk.data();
    return reader->Finish();
  }
};

TEST_F(ServiceHardeningTest, ADumpIsKeptAsArtifactsUnderTheDataDirAndServedByName) {
  std::vector<v1::JobEvent> events;
  ASSERT_TRUE(CheckWithDump(&events).ok());
  const std::string job = events[0].accepted().job_id();
  grpc::ClientContext context;
  v1::ListArtifactsRequest request;
  request.set_job_id(job);
  v1::ListArtifactsResponse list;
  ASSERT_TRUE(stub_->ListArtifacts(&context, request, &list).ok());
  ASSERT_GE(list.artifacts_size(), 7);  // the banks' 7 files, then each arm's
  bool saw_codes = false;
  for (const v1::Artifact& a : list.artifacts()) {
    const fs::path path = fs::path(data_dir_) / "artifacts" / job / a.name();
    ASSERT_TRUE(fs::is_regular_file(path)) << path;
    EXPECT_EQ(fs::file_size(path), a.bytes());
    saw_codes = saw_codes || a.name() == "gate_up_codes.npy";
  }
  EXPECT_TRUE(saw_codes);
  std::string bytes;
  ASSERT_TRUE(Artifact(job, "gate_up_codes.npy", &bytes).ok());
  std::ifstream file(fs::path(data_dir_) / "artifacts" / job / "gate_up_codes.npy",
                     std::ios::binary);
  const std::string on_disk((std::istreambuf_iterator<char>(file)), {});
  EXPECT_EQ(bytes, on_disk);
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
}

TEST_F(ServiceHardeningTest, ACancelledDownloadEndsCancelledAndTheNextOneIsServed) {
  std::vector<v1::JobEvent> events;
  ASSERT_TRUE(CheckWithDump(&events).ok());
  const std::string job = events[0].accepted().job_id();
  for (int i = 0; i < 20; ++i) {
    grpc::ClientContext context;
    v1::GetArtifactRequest request;
    request.set_job_id(job);
    request.set_name("gate_up_codes.npy");
    auto reader = stub_->GetArtifact(&context, request);
    context.TryCancel();
    v1::ArtifactChunk chunk;
    while (reader->Read(&chunk)) {
    }
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  std::string bytes;
  ASSERT_TRUE(Artifact(job, "gate_up_codes.npy", &bytes).ok());
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
}

TEST_F(ServiceHardeningTest, NoArtifactNameOrJobIdReachesOutsideTheJobsDirectory) {
  std::vector<v1::JobEvent> events;
  ASSERT_TRUE(CheckWithDump(&events).ok());
  const std::string job = events[0].accepted().job_id();
  for (const std::string name : {"../../gpuprobe.sqlite", "/etc/passwd", "..", ".", "a/b"}) {
    std::string bytes;
    EXPECT_EQ(Artifact(job, name, &bytes).error_code(), grpc::StatusCode::NOT_FOUND) << name;
    EXPECT_TRUE(bytes.empty());
  }
  std::string bytes;
  EXPECT_EQ(Artifact("../" + job, "gate_up_codes.npy", &bytes).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(ServiceHardeningTest, ADumpLargerThanTheArtifactLimitIsRefusedNamingDump) {
  StopDaemon();
  QueueLimits limits;
  limits.max_artifact_bytes = 1000;
  StartDaemon(limits);
  std::vector<v1::JobEvent> events;
  const grpc::Status refused = CheckWithDump(&events);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("dump"));
  EXPECT_THAT(refused.error_message(), HasSubstr("--max-artifact-bytes"));
  EXPECT_FALSE(fs::exists(fs::path(data_dir_) / "artifacts" / "job-1"));
}

TEST_F(ServiceHardeningTest, AStoreThatCannotWriteFailsTheJobRefusesSubmitsAndSaysSo) {
  StopDaemon();
  StartDaemon(QueueLimits{}, 1, /*max_store_bytes=*/64 << 10);
  std::vector<v1::JobEvent> events;
  // 300 reps: their rows do not fit what 64 KiB leaves.
  const grpc::Status status = RunAll(Small(300), &events);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DATA_LOSS) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("could not store"));
  EXPECT_FALSE(manager_->store_health().Writable());
  // Every event the client saw as stored (stored_at) before the failure was: the replay holds
  // them; the others were progress and readings told live only.
  const std::string id = events[0].accepted().job_id();
  std::vector<v1::JobEvent> stored;
  (void)WatchAll(id, &stored);
  std::erase_if(events, [](const v1::JobEvent& e) {
    return !e.has_stored_at() && (e.has_progress() || e.has_telemetry());
  });
  EXPECT_LE(events.size(), stored.size() + 1);
  // New work is refused, and a refused submit leaves nothing stored.
  v1::SubmitRequest request;
  *request.mutable_sweep() = Small(3);
  grpc::ClientContext context;
  v1::Job job;
  const grpc::Status refused = stub_->Submit(&context, request, &job);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("cannot write"));
  grpc::ClientContext list_context;
  v1::ListJobsResponse list;
  ASSERT_TRUE(stub_->ListJobs(&list_context, v1::ListJobsRequest(), &list).ok());
  EXPECT_EQ(list.jobs_size(), 1);
}

TEST_F(ServiceHardeningTest, WatchReplaysTheLastAttemptUnlessAskedForAllAndRowsCarryIt) {
  const v1::Job job = Submit(Small(300));
  AwaitState(job.id(), v1::JOB_STATE_RUNNING);
  absl::SleepFor(absl::Milliseconds(300));  // attempt 1's start and first rep are stored
  StopDaemon();
  StartDaemon();  // attempt 2 runs to the end
  AwaitState(job.id(), v1::JOB_STATE_SUCCEEDED);
  std::vector<v1::JobEvent> last, all;
  ASSERT_TRUE(WatchAll(job.id(), &last).ok());
  ASSERT_TRUE(WatchAll(job.id(), &all, /*all_attempts=*/true).ok());
  EXPECT_GT(all.size(), last.size());
  int rows = 0;
  for (const v1::JobEvent& e : last) {
    EXPECT_TRUE(e.attempt() == 0 || e.attempt() == 2) << e.ShortDebugString();
    if (e.has_row()) {
      ++rows;
      EXPECT_EQ(e.row().attempt(), 2u);
    }
  }
  EXPECT_EQ(rows, 6);
  EXPECT_TRUE(
      std::any_of(all.begin(), all.end(), [](const v1::JobEvent& e) { return e.attempt() == 1; }));
}

TEST_F(ServiceHardeningTest, OversizedFieldsAreRefusedQuotingOnlyAPrefix) {
  v1::SubmitRequest request;
  *request.mutable_sweep() = Small(3);
  request.set_idempotency_key(std::string(200000, 'k'));
  grpc::ClientContext context;
  v1::Job job;
  const grpc::Status refused = stub_->Submit(&context, request, &job);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("idempotency_key"));
  EXPECT_LT(refused.error_message().size(), 200u);
  grpc::ClientContext get_context;
  v1::GetJobRequest get;
  get.set_job_id(std::string(1 << 20, 'j'));
  const grpc::Status unknown = stub_->GetJob(&get_context, get, &job);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LT(unknown.error_message().size(), 200u);
}

TEST_F(ServiceHardeningTest, IdempotencyKeysBelongToATokenAndARetryGetsItsJobInAFullQueue) {
  StopDaemon();
  const std::string tokens = data_dir_ + "/tokens";
  std::ofstream(tokens) << "alice-t submit alice\nbob-t submit bob\n";
  absl::StatusOr<AccessControl> access = AccessControl::FromFile(tokens);
  ASSERT_TRUE(access.ok());
  access_ = *access;
  QueueLimits limits;
  limits.max_queued_jobs = 1;
  StartDaemon(limits);
  auto submit = [&](const std::string& token, int reps, const std::string& key, v1::Job* job) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + token);
    v1::SubmitRequest request;
    *request.mutable_sweep() = Small(reps);
    request.set_idempotency_key(key);
    return stub_->Submit(&context, request, job);
  };
  v1::Job running, alices, bobs, again;
  ASSERT_TRUE(submit("alice-t", 5000, "", &running).ok());
  for (int i = 0; i < 500; ++i) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer alice-t");
    v1::GetJobRequest get;
    get.set_job_id(running.id());
    v1::Job now;
    if (stub_->GetJob(&context, get, &now).ok() && now.state() == v1::JOB_STATE_RUNNING) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_TRUE(submit("alice-t", 3, "build-7", &alices).ok());  // the queue is full now
  // Bob's key is his own: his job differs (and the full queue refuses it).
  EXPECT_EQ(submit("bob-t", 4, "build-7", &bobs).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  // Alice's retry gets her job back although the queue is full.
  ASSERT_TRUE(submit("alice-t", 3, "build-7", &again).ok());
  EXPECT_EQ(again.id(), alices.id());
}

}  // namespace
}  // namespace gpuprobe
