// A client built against the API as it stood before the probe envelope (proto of commit
// 033ce59, tests/e2e/testdata/api_033ce59) against today's daemon: Run, Submit and Watch of a
// sweep and a check work as they did. This binary links that proto only, never today's.
#include <stdlib.h>

#include <filesystem>

#include "gmock/gmock.h"
#include "gpuprobe/v1/probe.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "tests/e2e/subprocess.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

using testing_support::ChildProcess;

class OldClientTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    temp_ = new testing_support::ScopedTempDir("gpuprobe_old_client");
    dir_ = new std::string(temp_->path());
    absl::StatusOr<ChildProcess> daemon =
        ChildProcess::Start({GPUPROBED_PATH, "--listen", "127.0.0.1:0", "--backend", "cpu",
                             "--http", "", "--data-dir", *dir_ + "/data"},
                            *dir_ + "/daemon.log");
    ASSERT_TRUE(daemon.ok()) << daemon.status();
    daemon_ = new ChildProcess(*std::move(daemon));
    absl::StatusOr<std::string> server = daemon_->GrpcAddress();
    ASSERT_TRUE(server.ok()) << server.status();
    stub_ =
        v1::ProbeService::NewStub(grpc::CreateChannel(*server, grpc::InsecureChannelCredentials()))
            .release();
  }
  void SetUp() override { ASSERT_NE(stub_, nullptr) << "gpuprobed did not start"; }
  static void TearDownTestSuite() {
    delete stub_;
    delete daemon_;
    delete dir_;
    delete temp_;
  }

  static v1::SweepRequest Small() {
    v1::SweepRequest r;
    r.mutable_geometry()->set_experts(16);
    r.mutable_geometry()->set_hidden(64);
    r.mutable_geometry()->set_ff(32);
    r.mutable_geometry()->set_selected(2);
    r.set_t_max(2);
    r.set_reps(3);
    (*r.mutable_labels())["client"] = "old";
    return r;
  }

  template <typename Reader>
  static std::vector<v1::JobEvent> ReadAll(Reader& reader) {
    std::vector<v1::JobEvent> events;
    v1::JobEvent e;
    while (reader.Read(&e)) events.push_back(e);
    EXPECT_TRUE(reader.Finish().ok());
    return events;
  }

  static inline testing_support::ScopedTempDir* temp_ = nullptr;
  static inline std::string* dir_ = nullptr;
  static inline ChildProcess* daemon_ = nullptr;
  static inline v1::ProbeService::Stub* stub_ = nullptr;
};

TEST_F(OldClientTest, RunStreamsTheSweepsRowsAsBefore) {
  grpc::ClientContext context;
  auto reader = stub_->Run(&context, Small());
  const std::vector<v1::JobEvent> events = ReadAll(*reader);
  ASSERT_GE(events.size(), 3u);
  EXPECT_TRUE(events.front().has_accepted());
  ASSERT_TRUE(events[1].has_started());
  EXPECT_EQ(events[1].started().sweep().arms_size(), 3);
  int rows = 0;
  for (const v1::JobEvent& e : events) {
    if (e.has_row()) {
      ++rows;
      EXPECT_GT(e.row().gu_us(), 0.0);
      EXPECT_EQ(e.row().kept_reps(), 2u);
    }
  }
  EXPECT_EQ(rows, 3);
  ASSERT_TRUE(events.back().has_finished());
  EXPECT_EQ(events.back().finished().state(), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(OldClientTest, SubmitThenWatchASweepAndACheck) {
  v1::SubmitRequest sweep;
  *sweep.mutable_sweep() = Small();
  grpc::ClientContext submit_context;
  v1::Job job;
  ASSERT_TRUE(stub_->Submit(&submit_context, sweep, &job).ok());
  EXPECT_EQ(job.request().sweep().labels().at("client"), "old");  // as submitted
  grpc::ClientContext watch_context;
  v1::WatchRequest watch;
  watch.set_job_id(job.id());
  auto reader = stub_->Watch(&watch_context, watch);
  const std::vector<v1::JobEvent> events = ReadAll(*reader);
  int rows = 0;
  for (const v1::JobEvent& e : events) rows += e.has_row() ? 1 : 0;
  EXPECT_EQ(rows, 3);
  EXPECT_EQ(events.back().finished().state(), v1::JOB_STATE_SUCCEEDED);

  v1::SubmitRequest check;
  check.mutable_check()->mutable_geometry()->set_experts(16);
  check.mutable_check()->mutable_geometry()->set_hidden(64);
  check.mutable_check()->mutable_geometry()->set_ff(32);
  check.mutable_check()->mutable_geometry()->set_selected(2);
  check.mutable_check()->set_t(2);
  check.mutable_check()->add_variants(v1::KERNEL_VARIANT_PER_SLOT);
  grpc::ClientContext check_context;
  v1::Job checked;
  ASSERT_TRUE(stub_->Submit(&check_context, check, &checked).ok());
  EXPECT_TRUE(checked.request().check().has_seed());  // drawn and stored, as before
  grpc::ClientContext watch_check;
  watch.set_job_id(checked.id());
  auto check_reader = stub_->Watch(&watch_check, watch);
  const std::vector<v1::JobEvent> check_events = ReadAll(*check_reader);
  int passed = 0;
  for (const v1::JobEvent& e : check_events) passed += e.has_check() && e.check().passed();
  EXPECT_EQ(passed, 4);  // gate+up and down at unions 2 and 4
  EXPECT_EQ(check_events.back().finished().state(), v1::JOB_STATE_SUCCEEDED);
}

}  // namespace
}  // namespace gpuprobe
