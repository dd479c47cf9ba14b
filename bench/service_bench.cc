// The shared-service benchmark (docs/PERF.md): measures and prints, asserts nothing.
//   1. a cpu-backend sweep's per-arm medians and spreads, idle and while 50 clients poll
//      ListJobs and GetJob at 10 Hz each, with the ListJobs call latency they see;
//   2. row latency from the store to a watching client (p50, p99), the client watching through
//      the last daemon while the sweep runs on the first;
//   3. submit throughput while 1000 jobs are queued.
// Runs its daemons in process (loopback ports), on SQLite in a temporary directory or on the
// PostgreSQL store named by --store (several daemons then share it, as a fleet).
//
//   build/bench/service_bench
//   build/bench/service_bench --store postgresql:///postgres?host=/tmp/pg --daemons 3
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "google/protobuf/util/time_util.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "server/api/probe_service.h"
#include "server/device/cpu_backend.h"
#include "server/store/store_url.h"
#include "spdlog/spdlog.h"

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

std::string HostName(int daemon) { return absl::StrCat("bench-", daemon); }

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

struct SweepResult {
  std::vector<v1::Row> rows;
  std::vector<double> row_latency_us;  // client receive time - stored_at
};

// Submits the sweep through `submit` for the first daemon's host and follows it through `watch`.
SweepResult RunSweep(v1::ProbeService::Stub& submit, v1::ProbeService::Stub& watch,
                     const v1::SweepRequest& sweep) {
  SweepResult result;
  v1::SubmitRequest request;
  *request.mutable_sweep() = sweep;
  request.set_host(HostName(0));
  v1::Job job;
  {
    grpc::ClientContext context;
    const grpc::Status status = submit.Submit(&context, request, &job);
    if (!status.ok()) {
      std::cerr << "submit failed: " << status.error_message() << "\n";
      return result;
    }
  }
  grpc::ClientContext context;
  v1::WatchRequest watch_request;
  watch_request.set_job_id(job.id());
  auto reader = watch.Watch(&context, watch_request);
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

// One daemon: its manager, its gRPC service and server, and a channel to it.
struct Daemon {
  std::unique_ptr<JobManager> manager;
  std::unique_ptr<ProbeService> service;
  std::unique_ptr<grpc::Server> server;
  std::shared_ptr<grpc::Channel> channel;
};

absl::StatusOr<Daemon> StartDaemon(const std::string& store_flag, const std::string& dir, int i) {
  ASSIGN_OR_RETURN(StoreUrl url, ParseStoreUrl(store_flag, dir));
  ASSIGN_OR_RETURN(std::unique_ptr<JobStore> store, OpenStore(url, 0));
  QueueLimits limits;
  limits.max_queued_jobs = 2000;
  auto probes = std::make_shared<const ProbeRegistry>(ProbeRegistry::Builtin({}).value());
  std::vector<std::unique_ptr<DeviceExecutor>> executors;
  executors.push_back(std::make_unique<InProcessExecutor>(std::make_unique<CpuBackend>()));
  FleetOptions fleet;
  fleet.host = HostName(i);
  Daemon d;
  ASSIGN_OR_RETURN(d.manager, JobManager::Start(std::move(store), std::move(executors), limits,
                                                probes, nullptr, fleet));
  d.service = std::make_unique<ProbeService>(*d.manager, AccessControl(), "bench");
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(d.service.get());
  d.server = builder.BuildAndStart();
  d.channel =
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
  return d;
}

// A sweep run under load, and what the load saw.
struct Polled {
  SweepResult sweep;
  double calls_per_s = 0.0;
  std::vector<double> list_latency_us;  // each ListJobs call's
};

// Runs `sweep` while 50 pollers call ListJobs and GetJob at 10 Hz, spread over the daemons.
Polled RunUnderPollers(std::vector<Daemon>& daemons, v1::ProbeService::Stub& submit,
                       v1::ProbeService::Stub& watch, const v1::SweepRequest& sweep) {
  const int daemon_count = static_cast<int>(daemons.size());
  std::atomic<bool> stop{false};
  std::atomic<int64_t> polls{0};
  absl::Mutex mu;
  Polled result;
  std::vector<std::thread> pollers;
  const std::string some_job = "job-1";
  for (int i = 0; i < 50; ++i) {
    pollers.emplace_back([&, i] {
      auto poller = v1::ProbeService::NewStub(daemons[i % daemon_count].channel);
      std::vector<double> mine;
      while (!stop.load()) {
        const absl::Time next = absl::Now() + absl::Milliseconds(100);
        grpc::ClientContext list_context, get_context;
        v1::ListJobsResponse list;
        const absl::Time list_start = absl::Now();
        (void)poller->ListJobs(&list_context, v1::ListJobsRequest(), &list);
        mine.push_back(absl::ToDoubleMicroseconds(absl::Now() - list_start));
        v1::GetJobRequest get;
        get.set_job_id(some_job);
        v1::Job job;
        (void)poller->GetJob(&get_context, get, &job);
        polls += 2;
        absl::SleepFor(next - absl::Now());
      }
      absl::MutexLock lock(&mu);
      result.list_latency_us.insert(result.list_latency_us.end(), mine.begin(), mine.end());
    });
  }
  const absl::Time loaded_start = absl::Now();
  result.sweep = RunSweep(submit, watch, sweep);
  const double loaded_s = absl::ToDoubleSeconds(absl::Now() - loaded_start);
  stop = true;
  for (std::thread& t : pollers) t.join();
  result.calls_per_s = polls.load() / loaded_s;
  return result;
}

// Times 1000 submits of small sweeps queued behind a long one, all for the first daemon.
void MeasureSubmits(v1::ProbeService::Stub& submit, Daemon& first) {
  v1::SubmitRequest blocker;
  *blocker.mutable_sweep() = BenchSweep(10000);
  blocker.set_host(HostName(0));
  {
    grpc::ClientContext context;
    v1::Job job;
    (void)submit.Submit(&context, blocker, &job);
  }
  v1::SubmitRequest small;
  *small.mutable_sweep() = BenchSweep(2);
  small.set_host(HostName(0));
  const absl::Time submit_start = absl::Now();
  int submitted = 0;
  for (int i = 0; i < 1000; ++i) {
    grpc::ClientContext context;
    v1::Job job;
    submitted += submit.Submit(&context, small, &job).ok() ? 1 : 0;
  }
  const double submit_s = absl::ToDoubleSeconds(absl::Now() - submit_start);
  std::cout << absl::StrFormat("submitted %d jobs in %.2f s: %.0f submits/s; queue depth now %d\n",
                               submitted, submit_s, submitted / submit_s,
                               first.manager->QueueDepth().value_or(-1));
}

int Main(int argc, char** argv) {
  std::string store_flag;
  int daemon_count = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--store") {
      store_flag = argv[i + 1];
    } else if (flag == "--daemons" && absl::SimpleAtoi(argv[i + 1], &daemon_count) &&
               daemon_count >= 1) {
    } else {
      std::cerr << "usage: service_bench [--store URL] [--daemons N]\n";
      return 2;
    }
  }
  spdlog::set_level(spdlog::level::warn);  // the figures, not every job's log line
  std::string tmpl = "/tmp/gpuprobe_bench_XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  std::vector<Daemon> daemons;
  for (int i = 0; i < daemon_count; ++i) {
    absl::StatusOr<Daemon> d = StartDaemon(store_flag, dir, i);
    if (!d.ok()) {
      std::cerr << d.status() << "\n";
      return 1;
    }
    daemons.push_back(*std::move(d));
  }
  std::cout << absl::StrFormat("%d daemon(s) on a %s store; sweeps run on %s, watched through %s\n",
                               daemon_count, daemons[0].manager->Info("bench").value().store(),
                               HostName(0), HostName(daemon_count - 1));
  auto submit = v1::ProbeService::NewStub(daemons.front().channel);
  auto watch = v1::ProbeService::NewStub(daemons.back().channel);

  // 1. Idle twice (run-to-run noise), then under 50 pollers at 10 Hz, spread over the daemons.
  const v1::SweepRequest sweep = BenchSweep(150);
  const SweepResult idle_a = RunSweep(*submit, *watch, sweep);
  const SweepResult idle_b = RunSweep(*submit, *watch, sweep);
  const Polled loaded = RunUnderPollers(daemons, *submit, *watch, sweep);
  PrintRows("idle run 1", idle_a);
  PrintRows("idle run 2", idle_b);
  PrintRows("50 pollers at 10 Hz", loaded.sweep);
  std::cout << absl::StrFormat(
      "pollers made %.0f calls/s during the loaded run; ListJobs latency p50 %.0f us, p99 %.0f "
      "us (%d calls)\n",
      loaded.calls_per_s, Percentile(loaded.list_latency_us, 0.5),
      Percentile(loaded.list_latency_us, 0.99), loaded.list_latency_us.size());

  // 2. Row latency, over every row of the three runs.
  std::vector<double> latency = idle_a.row_latency_us;
  latency.insert(latency.end(), idle_b.row_latency_us.begin(), idle_b.row_latency_us.end());
  latency.insert(latency.end(), loaded.sweep.row_latency_us.begin(),
                 loaded.sweep.row_latency_us.end());
  std::cout << absl::StrFormat(
      "row latency store -> watching client: p50 %.0f us, p99 %.0f us "
      "(%d rows)\n",
      Percentile(latency, 0.5), Percentile(latency, 0.99), latency.size());

  // 3. Submit throughput with 1000 jobs queued behind a long one, all for the first daemon.
  MeasureSubmits(*submit, daemons[0]);
  for (Daemon& d : daemons) {
    d.manager->Stop();
    d.server->Shutdown();
  }
  return 0;
}

}  // namespace
}  // namespace gpuprobe

int main(int argc, char** argv) { return gpuprobe::Main(argc, argv); }
