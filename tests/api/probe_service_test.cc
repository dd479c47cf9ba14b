// The gRPC service in process, on the cpu backend, over a real loopback port.
#include "server/api/probe_service.h"

#include <thread>

#include "google/protobuf/util/time_util.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "server/device/cpu_backend.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;

class ProbeServiceTest : public testing::Test {
 protected:
  void SetUp() override {
    worker_ = std::make_unique<DeviceWorker>(std::make_unique<CpuBackend>());
    service_ = std::make_unique<ProbeService>(*worker_, SweepLimits{}, "test");
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(port, 0);
    stub_ = v1::ProbeService::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    worker_->Stop();
    server_->Shutdown();
  }

  static v1::SweepRequest Small(int reps = 3) {
    v1::SweepRequest r;
    r.mutable_geometry()->set_experts(64);
    r.mutable_geometry()->set_hidden(512);
    r.mutable_geometry()->set_ff(128);
    r.mutable_geometry()->set_selected(4);
    r.set_t_max(3);
    r.set_reps(reps);
    return r;
  }

  // Reads a whole stream; `on_event` sees each event as it arrives.
  grpc::Status RunAll(const v1::SweepRequest& request, std::vector<v1::JobEvent>* events,
                      grpc::ClientContext* context = nullptr,
                      const std::function<void(const v1::JobEvent&)>& on_event = nullptr) {
    grpc::ClientContext own;
    grpc::ClientContext* ctx = context != nullptr ? context : &own;
    auto reader = stub_->Run(ctx, request);
    v1::JobEvent event;
    while (reader->Read(&event)) {
      if (on_event) on_event(event);
      events->push_back(event);
    }
    return reader->Finish();
  }

  std::unique_ptr<DeviceWorker> worker_;
  std::unique_ptr<ProbeService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::ProbeService::Stub> stub_;
};

TEST_F(ProbeServiceTest, RunStreamsAcceptedStartedProgressRowsFinishedInOrder) {
  std::vector<v1::JobEvent> events;
  const grpc::Status status = RunAll(Small(3), &events);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(events.size(), 1u + 1 + 3 + 6 + 1);
  EXPECT_TRUE(events[0].has_accepted());
  EXPECT_FALSE(events[0].accepted().job_id().empty());
  ASSERT_TRUE(events[1].has_started());
  EXPECT_EQ(events[1].started().device(), "cpu (reference kernels)");
  EXPECT_EQ(events[1].started().sweep().arms_size(), 6);
  EXPECT_EQ(events[1].started().sweep().hidden(), 512u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(events[2 + i].progress().reps_done(), i + 1u);
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(events[5 + i].has_row());
    EXPECT_EQ(events[5 + i].row().arm_index(), static_cast<uint32_t>(i));
    EXPECT_EQ(events[5 + i].row().kept_reps(), 2u);
    EXPECT_GT(events[5 + i].row().gu_us(), 0.0);
    EXPECT_EQ(events[5 + i].row().device(), "cpu (reference kernels)");
  }
  EXPECT_DOUBLE_EQ(events[10].row().vs_reference(), 1.0);
  ASSERT_TRUE(events[11].has_finished());
  EXPECT_EQ(events[11].finished().state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(events[11].finished().rows(), 6u);
}

TEST_F(ProbeServiceTest, InvalidRequestIsRefusedBeforeItIsQueued) {
  v1::SweepRequest request = Small();
  request.mutable_geometry()->set_hidden(500);
  std::vector<v1::JobEvent> events;
  const grpc::Status status = RunAll(request, &events);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("hidden"));
  EXPECT_TRUE(events.empty());
}

TEST_F(ProbeServiceTest, SweepLargerThanTheDeviceIsRefusedWithResourceExhausted) {
  v1::SweepRequest request = Small();
  request.mutable_geometry()->set_experts(8192);
  request.mutable_geometry()->set_hidden(65536);
  request.mutable_geometry()->set_ff(65536);
  std::vector<v1::JobEvent> events;
  const grpc::Status status = RunAll(request, &events);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("GiB"));
}

TEST_F(ProbeServiceTest, UnimplementedVariantIsRefused) {
  v1::SweepRequest request = Small();
  request.add_variants(v1::KERNEL_VARIANT_FLOOR);
  std::vector<v1::JobEvent> events;
  const grpc::Status status = RunAll(request, &events);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(status.error_message(), HasSubstr("variant"));
}

TEST_F(ProbeServiceTest, ConcurrentJobsRunOneAtATime) {
  struct Seen {
    uint32_t position = 99;
    int64_t started_us = 0, finished_us = 0;
  };
  auto run = [&](Seen* seen) {
    std::vector<v1::JobEvent> events;
    EXPECT_TRUE(RunAll(Small(20), &events).ok());
    using google::protobuf::util::TimeUtil;
    for (const v1::JobEvent& e : events) {
      if (e.has_accepted()) seen->position = e.accepted().queue_position();
      if (e.has_started()) seen->started_us = TimeUtil::TimestampToMicroseconds(e.started().started_at());
      if (e.has_finished()) {
        seen->finished_us = TimeUtil::TimestampToMicroseconds(e.finished().finished_at());
      }
    }
  };
  Seen a, b;
  std::thread ta(run, &a);
  std::thread tb(run, &b);
  ta.join();
  tb.join();
  const Seen& first = a.started_us < b.started_us ? a : b;
  const Seen& second = a.started_us < b.started_us ? b : a;
  EXPECT_EQ(first.position, 0u);
  EXPECT_EQ(second.position, 1u);
  EXPECT_GT(first.started_us, 0);
  EXPECT_GE(second.started_us, first.finished_us) << "the jobs overlapped on the device";
}

TEST_F(ProbeServiceTest, ClientThatLeavesCancelsItsJobAndTheNextJobRuns) {
  grpc::ClientContext context;
  std::vector<v1::JobEvent> events;
  const grpc::Status status =
      RunAll(Small(10000), &events, &context, [&](const v1::JobEvent& e) {
        if (e.has_progress() && e.progress().reps_done() == 2) context.TryCancel();
      });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  std::vector<v1::JobEvent> next;
  EXPECT_TRUE(RunAll(Small(2), &next).ok());
  EXPECT_EQ(next.back().finished().state(), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(ProbeServiceTest, ServerInfoDescribesTheBackend) {
  grpc::ClientContext context;
  v1::ServerInfo info;
  ASSERT_TRUE(stub_->GetServerInfo(&context, v1::GetServerInfoRequest(), &info).ok());
  EXPECT_EQ(info.backend(), "cpu");
  EXPECT_EQ(info.device(), "cpu (reference kernels)");
  EXPECT_EQ(info.version(), "test");
  EXPECT_GT(info.device_memory_bytes(), 0u);
}

}  // namespace
}  // namespace gpuprobe
