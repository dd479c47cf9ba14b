// The gRPC service in process, on the cpu backend and a store in a temporary directory, over a
// real loopback port: the fixture the service's tests share.
#pragma once

#include <stdlib.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "server/api/probe_service.h"
#include "server/device/cpu_backend.h"
#include "server/store/sqlite_job_store.h"
#include "tests/probes/moe_union/small_sweep.h"
#include "tests/temp_dir.h"

namespace gpuprobe {

class ProbeServiceTest : public testing::Test {
 protected:
  testing_support::ScopedTempDir temp_{"gpuprobe_service"};  // removed last

  void SetUp() override {
    data_dir_ = temp_.path();
    StartDaemon();
  }

  void TearDown() override { StopDaemon(); }

  // Stops the daemon if one runs (a restart: one daemon per store file), then starts one.
  // `max_store_bytes` > 0 bounds the store's file (SqliteJobStore::Open).
  void StartDaemon(QueueLimits limits = {}, int devices = 1, int64_t max_store_bytes = 0) {
    StopDaemon();
    absl::StatusOr<std::unique_ptr<JobStore>> store =
        SqliteJobStore::Open(data_dir_ + "/gpuprobe.sqlite", max_store_bytes);
    ASSERT_TRUE(store.ok()) << store.status();
    auto probes = std::make_shared<const ProbeRegistry>(ProbeRegistry::Builtin({}).value());
    std::vector<std::unique_ptr<DeviceExecutor>> executors;
    for (int i = 0; i < devices; ++i) {
      executors.push_back(std::make_unique<InProcessExecutor>(
          make_backend_ ? make_backend_() : std::make_unique<CpuBackend>()));
    }
    absl::StatusOr<std::unique_ptr<JobManager>> manager = JobManager::Start(
        *std::move(store), std::move(executors), limits, probes,
        std::make_unique<ArtifactStore>(data_dir_ + "/artifacts", limits.max_artifact_bytes));
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = *std::move(manager);
    service_ = std::make_unique<ProbeService>(*manager_, access_, "test");
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(port, 0);
    stub_ = v1::ProbeService::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  }

  // The backend of each device at the next StartDaemon; empty: the cpu backend.
  std::function<std::unique_ptr<Backend>()> make_backend_;

  void StopDaemon() {
    if (manager_) manager_->Stop();
    if (server_) server_->Shutdown();
    server_.reset();
    service_.reset();
    manager_.reset();
  }

  static v1::SweepRequest Small(int reps = 3) {
    v1::SweepRequest r = SmallSweepRequest();
    r.set_reps(reps);
    return r;
  }

  v1::Job Submit(const v1::SweepRequest& sweep, const std::string& key = "", int priority = 0) {
    v1::SubmitRequest request;
    *request.mutable_sweep() = sweep;
    request.set_idempotency_key(key);
    request.set_priority(priority);
    grpc::ClientContext context;
    v1::Job job;
    const grpc::Status status = stub_->Submit(&context, request, &job);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return job;
  }

  // Waits (up to 5 s) until the job is in `state`.
  void AwaitState(const std::string& id, v1::JobState state) {
    for (int i = 0; i < 500 && Get(id).state() != state; ++i) {
      absl::SleepFor(absl::Milliseconds(10));
    }
  }

  v1::Job Get(const std::string& id) {
    grpc::ClientContext context;
    v1::GetJobRequest request;
    request.set_job_id(id);
    v1::Job job;
    EXPECT_TRUE(stub_->GetJob(&context, request, &job).ok());
    return job;
  }

  // Reads a whole stream; `on_event` sees each event as it arrives.
  template <typename Reader>
  static grpc::Status ReadAll(Reader& reader, std::vector<v1::JobEvent>* events,
                              const std::function<void(const v1::JobEvent&)>& on_event) {
    v1::JobEvent event;
    while (reader.Read(&event)) {
      if (on_event) on_event(event);
      events->push_back(event);
    }
    return reader.Finish();
  }

  grpc::Status RunAll(const v1::SweepRequest& request, std::vector<v1::JobEvent>* events,
                      grpc::ClientContext* context = nullptr,
                      const std::function<void(const v1::JobEvent&)>& on_event = nullptr) {
    grpc::ClientContext own;
    auto reader = stub_->Run(context != nullptr ? context : &own, request);
    return ReadAll(*reader, events, on_event);
  }

  grpc::Status WatchAll(const std::string& id, std::vector<v1::JobEvent>* events,
                        bool all_attempts = false) {
    grpc::ClientContext context;
    v1::WatchRequest request;
    request.set_job_id(id);
    request.set_all_attempts(all_attempts);
    auto reader = stub_->Watch(&context, request);
    return ReadAll(*reader, events, nullptr);
  }

  std::string data_dir_;
  AccessControl access_;
  std::unique_ptr<JobManager> manager_;
  std::unique_ptr<ProbeService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::ProbeService::Stub> stub_;
};

}  // namespace gpuprobe
