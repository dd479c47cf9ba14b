// The shared-service benchmark (docs/PERF.md): measures and prints, asserts nothing.
//   1. a cpu-backend sweep's per-arm medians and spreads, idle and while 50 clients poll
//      ListJobs and GetJob at 10 Hz each;
//   2. row latency from the store to a watching client (p50, p99);
//   3. submit throughput while 1000 jobs are queued.
// Runs a daemon in process (store in a temporary directory, loopback port 0).
//
//   build/tests/service_bench
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/time_util.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "server/api/probe_service.h"
#include "server/device/cpu_backend.h"
#include "server/store/sqlite_job_store.h"

namespace gpuprobe {
namespace {

using google::protobuf::util::TimeUtil;

v1::SweepRequest BenchSweep(int reps) {
  v1::SweepRequest r;
  r.mutable_geometry()->set_experts(128);
  r.mutable_geometry()->set_hidden(1024);
  r.mutable_geometry()->set_ff(256);
  r.mutable_geometry()->set_selected(4);
  r.set_t_max(3);
  r.set_reps(reps);
  return r;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

struct SweepResult {
  std::vector<v1::Row> rows;
  std::vector<double> row_latency_us;  // client receive time - stored_at
};

SweepResult RunSweep(v1::ProbeService::Stub& stub, const v1::SweepRequest& request) {
  grpc::ClientContext context;
  auto reader = stub.Run(&context, request);
  SweepResult result;
  v1::JobEvent event;
  while (reader->Read(&event)) {
    if (!event.has_row()) continue;
    const int64_t now_us = absl::ToUnixMicros(absl::Now());
    result.row_latency_us.push_back(
        static_cast<double>(now_us - TimeUtil::TimestampToMicroseconds(event.stored_at())));
    result.rows.push_back(event.row());
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) std::cerr << "sweep failed: " << status.error_message() << "\n";
  return result;
}

void PrintRows(const char* label, const SweepResult& r) {
  for (const v1::Row& row : r.rows) {
    std::cout << absl::StrFormat(
        "%-22s t=%d union=%-2d gu %8.1f us (spread %.3f)  down %8.1f us "
        "(spread %.3f)\n",
        label, row.arm().t(), row.arm().union_size(), row.gu_us(), row.gu_spread(), row.down_us(),
        row.dn_spread());
  }
}

int Main() {
  std::string tmpl = "/tmp/gpuprobe_bench_XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  absl::StatusOr<std::unique_ptr<JobStore>> store = SqliteJobStore::Open(dir + "/gpuprobe.sqlite");
  if (!store.ok()) return 1;
  QueueLimits limits;
  limits.max_queued_jobs = 2000;
  std::vector<std::unique_ptr<DeviceExecutor>> executors;
  executors.push_back(
      std::make_unique<InProcessExecutor>(std::make_unique<CpuBackend>(), limits.sweep));
  absl::StatusOr<std::unique_ptr<JobManager>> manager =
      JobManager::Start(*std::move(store), std::move(executors), limits);
  if (!manager.ok()) return 1;
  ProbeService service(**manager, AccessControl(), "bench");
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  auto channel =
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
  auto stub = v1::ProbeService::NewStub(channel);

  // 1. Idle twice (run-to-run noise), then under 50 pollers at 10 Hz.
  const v1::SweepRequest sweep = BenchSweep(150);
  const SweepResult idle_a = RunSweep(*stub, sweep);
  const SweepResult idle_b = RunSweep(*stub, sweep);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> polls{0};
  std::vector<std::thread> pollers;
  const std::string some_job = "job-1";
  for (int i = 0; i < 50; ++i) {
    pollers.emplace_back([&] {
      auto poller = v1::ProbeService::NewStub(channel);
      while (!stop.load()) {
        const absl::Time next = absl::Now() + absl::Milliseconds(100);
        grpc::ClientContext list_context, get_context;
        v1::ListJobsResponse list;
        (void)poller->ListJobs(&list_context, v1::ListJobsRequest(), &list);
        v1::GetJobRequest get;
        get.set_job_id(some_job);
        v1::Job job;
        (void)poller->GetJob(&get_context, get, &job);
        polls += 2;
        absl::SleepFor(next - absl::Now());
      }
    });
  }
  const absl::Time loaded_start = absl::Now();
  const SweepResult loaded = RunSweep(*stub, sweep);
  const double loaded_s = absl::ToDoubleSeconds(absl::Now() - loaded_start);
  stop = true;
  for (std::thread& t : pollers) t.join();
  PrintRows("idle run 1", idle_a);
  PrintRows("idle run 2", idle_b);
  PrintRows("50 pollers at 10 Hz", loaded);
  std::cout << absl::StrFormat("pollers made %.0f calls/s during the loaded run\n",
                               polls.load() / loaded_s);

  // 2. Row latency, over every row of the three runs.
  std::vector<double> latency = idle_a.row_latency_us;
  latency.insert(latency.end(), idle_b.row_latency_us.begin(), idle_b.row_latency_us.end());
  latency.insert(latency.end(), loaded.row_latency_us.begin(), loaded.row_latency_us.end());
  std::cout << absl::StrFormat(
      "row latency store -> watching client: p50 %.0f us, p99 %.0f us "
      "(%d rows)\n",
      Percentile(latency, 0.5), Percentile(latency, 0.99), latency.size());

  // 3. Submit throughput with 1000 jobs queued behind a long one.
  v1::SubmitRequest blocker;
  *blocker.mutable_sweep() = BenchSweep(10000);
  {
    grpc::ClientContext context;
    v1::Job job;
    (void)stub->Submit(&context, blocker, &job);
  }
  v1::SubmitRequest small;
  *small.mutable_sweep() = BenchSweep(2);
  const absl::Time submit_start = absl::Now();
  int submitted = 0;
  for (int i = 0; i < 1000; ++i) {
    grpc::ClientContext context;
    v1::Job job;
    submitted += stub->Submit(&context, small, &job).ok() ? 1 : 0;
  }
  const double submit_s = absl::ToDoubleSeconds(absl::Now() - submit_start);
  std::cout << absl::StrFormat("submitted %d jobs in %.2f s: %.0f submits/s; queue depth now %d\n",
                               submitted, submit_s, submitted / submit_s, (*manager)->QueueDepth());
  (*manager)->Stop();
  server->Shutdown();
  return 0;
}

}  // namespace
}  // namespace gpuprobe

int main() { return gpuprobe::Main(); }
