// End to end, the fleet: three gpuprobed (cpu backend, each its own data directory and host
// name) on one PostgreSQL store that the test starts (deploy/local-postgres.sh), and the
// gpuprobe CLI talking to any of them.
#include <signal.h>
#include <stdlib.h>

#include <map>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gpuprobe/v1/probe.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "tests/e2e/chromium.h"
#include "tests/e2e/grpc_health.h"
#include "tests/e2e/subprocess.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;
using testing_support::ChildProcess;
using testing_support::Chromium;
using testing_support::CommandResult;
using testing_support::RunCommand;

constexpr int kDaemons = 3;

class FleetEndToEndTest : public testing::Test {
 protected:
  // Removed last, after the daemons and the cluster stopped.
  testing_support::ScopedTempDir temp_{"gpuprobe_fleet"}, pg_temp_{"gpuprobe_fleet_pg"};

  void SetUp() override {
    dir_ = temp_.path();
    pg_dir_ = pg_temp_.path();  // its own: the cluster's owner must reach it
    absl::StatusOr<CommandResult> pg =
        RunCommand({LOCAL_POSTGRES_PATH, "start", pg_dir_}, {}, dir_);
    ASSERT_TRUE(pg.ok() && pg->exit_code == 0) << (pg.ok() ? pg->err : pg.status().ToString());
    store_ = std::string(absl::StripTrailingAsciiWhitespace(pg->out));
    for (int i = 0; i < kDaemons; ++i) StartDaemon(i);
  }
  void TearDown() override {
    daemons_.clear();  // SIGKILLs any still running
    (void)RunCommand({LOCAL_POSTGRES_PATH, "stop", pg_dir_}, {}, dir_);
  }

  std::vector<std::string> DaemonArgv(int i, const std::string& store) const {
    return {GPUPROBED_PATH,
            "--listen",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
            "--backend",
            "cpu",
            "--data-dir",
            absl::StrCat(dir_, "/data", i),
            "--store",
            store,
            "--host-name",
            Host(i),
            "--lease-seconds",
            "2"};
  }
  void StartDaemon(int i) {
    absl::StatusOr<ChildProcess> d =
        ChildProcess::Start(DaemonArgv(i, store_), absl::StrCat(dir_, "/daemon", i, ".log"));
    ASSERT_TRUE(d.ok()) << d.status();
    absl::StatusOr<std::string> server = d->GrpcAddress(absl::Seconds(30));
    ASSERT_TRUE(server.ok()) << server.status() << d->Log();
    absl::StatusOr<std::string> http = d->HttpAddress();
    ASSERT_TRUE(http.ok()) << http.status();
    daemons_.emplace(i, *std::move(d));
    servers_[i] = *server;
    http_[i] = *http;
  }
  static std::string Host(int i) { return absl::StrCat("h", i); }

  CommandResult Cli(int daemon, std::vector<std::string> args) {
    args.insert(args.begin(), {GPUPROBE_PATH, "--server", servers_[daemon]});
    absl::StatusOr<CommandResult> r = RunCommand(args, {}, dir_, absl::Seconds(180));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }
  // Submits a small cpu sweep (6 rows) through `daemon`; returns the job id.
  std::string Submit(int daemon, int reps, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "submit", "--experts", "64",     "--hidden",        "512", "--ff", "128", "--selected", "4",
        "--t",    "3",         "--reps", absl::StrCat(reps)};
    args.insert(args.end(), extra.begin(), extra.end());
    const CommandResult r = Cli(daemon, args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    last_submit_err_ = r.err;
    std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
    return lines.empty() ? "" : lines.back();
  }
  v1::Job GetJob(int daemon, const std::string& id) {
    auto stub = v1::ProbeService::NewStub(
        grpc::CreateChannel(servers_[daemon], grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    v1::GetJobRequest request;
    request.set_job_id(id);
    v1::Job job;
    const grpc::Status s = stub->GetJob(&context, request, &job);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return job;
  }
  v1::ServerInfo Info(int daemon) {
    auto stub = v1::ProbeService::NewStub(
        grpc::CreateChannel(servers_[daemon], grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    v1::ServerInfo info;
    EXPECT_TRUE(stub->GetServerInfo(&context, v1::GetServerInfoRequest(), &info).ok());
    return info;
  }
  // Polls until the job is in `state` (through `daemon`), for at most `timeout`.
  v1::Job AwaitState(int daemon, const std::string& id, v1::JobState state,
                     absl::Duration timeout = absl::Seconds(60)) {
    const absl::Time deadline = absl::Now() + timeout;
    v1::Job job;
    while (absl::Now() < deadline) {
      job = GetJob(daemon, id);
      if (job.state() == state) return job;
      absl::SleepFor(absl::Milliseconds(20));
    }
    ADD_FAILURE() << id << " never reached " << v1::JobState_Name(state) << ": "
                  << job.ShortDebugString();
    return job;
  }
  // grpc.health.v1's answer of `daemon`.
  grpc::health::v1::HealthCheckResponse::ServingStatus Health(int daemon) {
    return testing_support::CheckHealth(servers_[daemon]);
  }
  // How long until every daemon's health is `status` (at most `timeout`, then a failure).
  absl::Duration AwaitHealthOfAll(grpc::health::v1::HealthCheckResponse::ServingStatus status,
                                  absl::Duration timeout) {
    const absl::Time start = absl::Now();
    while (absl::Now() - start < timeout) {
      int agree = 0;
      for (int i = 0; i < kDaemons; ++i) agree += Health(i) == status ? 1 : 0;
      if (agree == kDaemons) return absl::Now() - start;
      absl::SleepFor(absl::Milliseconds(50));
    }
    ADD_FAILURE() << "not every daemon's health became " << status << " in " << timeout;
    return timeout;
  }
  // Data rows of `show --format tsv` through `daemon`.
  int ShownRows(int daemon, const std::string& id) {
    const CommandResult shown = Cli(daemon, {"--format", "tsv", "show", id});
    int rows = 0;
    for (absl::string_view line : absl::StrSplit(shown.out, '\n', absl::SkipEmpty())) {
      if (!absl::StartsWith(line, "#")) ++rows;
    }
    return rows - 1;  // the header
  }

  std::string dir_, pg_dir_, store_, last_submit_err_;
  std::map<int, ChildProcess> daemons_;
  std::map<int, std::string> servers_, http_;
};

TEST_F(FleetEndToEndTest, ThirtyJobsSubmittedThroughOneDaemonSpreadOverAllThreeEachRunOnce) {
  const v1::ServerInfo info = Info(1);
  EXPECT_EQ(info.store(), "postgresql");
  EXPECT_EQ(info.host(), "h1");
  ASSERT_EQ(info.fleet_size(), kDaemons);
  for (const v1::FleetDevice& f : info.fleet()) EXPECT_EQ(f.state(), "serving");

  std::vector<std::string> jobs;
  for (int i = 0; i < 30; ++i) jobs.push_back(Submit(0, 60));
  std::map<std::string, int> by_host;
  for (const std::string& id : jobs) {
    const CommandResult waited = Cli(2, {"wait", id, "--timeout", "120s"});
    ASSERT_EQ(waited.exit_code, 0) << id << waited.err;
    const v1::Job job = GetJob(1, id);
    EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
    EXPECT_EQ(job.attempts(), 1u) << id;
    EXPECT_EQ(job.results(), 6u) << id;
    ++by_host[job.host()];
  }
  EXPECT_EQ(by_host.size(), 3u) << "hosts used: " << by_host.size();
  EXPECT_EQ(ShownRows(1, jobs.back()), 6);
  // Each job started exactly once, on one daemon.
  std::map<std::string, int> starts;
  for (const auto& [i, daemon] : daemons_) {
    for (absl::string_view line : absl::StrSplit(daemon.Log(), '\n')) {
      for (const std::string& id : jobs) {
        if (absl::StrContains(line, absl::StrCat("job ", id, " started"))) ++starts[id];
      }
    }
  }
  for (const std::string& id : jobs) EXPECT_EQ(starts[id], 1) << id;
}

TEST_F(FleetEndToEndTest, KillNineOfTheRunningDaemonLetsAnotherFinishTheJobAfterItsLease) {
  const std::string id = Submit(0, 1500);
  const v1::Job running = AwaitState(0, id, v1::JOB_STATE_RUNNING);
  int runner = -1;
  for (int i = 0; i < kDaemons; ++i) {
    if (running.host() == Host(i)) runner = i;
  }
  ASSERT_GE(runner, 0) << running.ShortDebugString();
  absl::SleepFor(absl::Milliseconds(500));  // well into attempt 1 (a few seconds of reps)
  absl::StatusOr<int> killed = daemons_.at(runner).StopWith(SIGKILL, absl::Seconds(10));
  ASSERT_TRUE(killed.ok());
  const int survivor = (runner + 1) % kDaemons;
  const CommandResult waited = Cli(survivor, {"wait", id, "--timeout", "120s"});
  EXPECT_EQ(waited.exit_code, 0) << waited.err;
  const v1::Job job = GetJob(survivor, id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.attempts(), 2u);
  EXPECT_NE(job.host(), Host(runner));
  EXPECT_EQ(job.results(), 6u) << "only the last attempt's rows count";
  EXPECT_EQ(ShownRows(survivor, id), 6) << "no duplicated row";
  // The killed daemon's device is shown as lost.
  bool lost = false;
  const v1::ServerInfo fleet = Info(survivor);
  for (const v1::FleetDevice& f : fleet.fleet()) {
    if (f.host() == Host(runner)) lost = f.state() == "lost";
  }
  EXPECT_TRUE(lost);
}

TEST_F(FleetEndToEndTest, WatchAndCancelThroughDaemonsOtherThanTheOneRunningTheJob) {
  // Pinned to host h2; watched through h0, cancelled through h1.
  const std::string id = Submit(0, 10000, {"--host", "h2"});
  auto stub = v1::ProbeService::NewStub(
      grpc::CreateChannel(servers_[0], grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(120)));
  v1::WatchRequest request;
  request.set_job_id(id);
  auto stream = stub->Watch(&context, request);
  std::vector<v1::JobEvent> events;
  v1::JobEvent event;
  int progress = 0;
  bool cancelled = false;
  while (stream->Read(&event)) {
    events.push_back(event);
    if (event.has_progress()) ++progress;
    if (progress == 3 && !cancelled) {
      // Live progress of a job on h2 reached a watcher of h0: now cancel through h1.
      const CommandResult r = Cli(1, {"cancel", id});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      cancelled = true;
    }
  }
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);  // the job's end
  ASSERT_TRUE(cancelled) << "no live progress reached the watcher";
  ASSERT_TRUE(events.back().has_finished());
  EXPECT_EQ(events.back().finished().state(), v1::JOB_STATE_CANCELLED);
  const v1::Job job = GetJob(1, id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(job.host(), "h2");
  EXPECT_LT(job.finished_at().seconds() - job.started_at().seconds(), 20)
      << "stopped between launches, not at the end";
  EXPECT_EQ(Cli(2, {"wait", id}).exit_code, 3);
}

TEST_F(FleetEndToEndTest, AJobForAModelNoDaemonServesStaysQueuedAndSaysWhy) {
  const std::string id = Submit(1, 3, {"--gpu", "NVIDIA B200"});
  EXPECT_THAT(last_submit_err_,
              HasSubstr("no serving gpuprobed of the fleet has a \"NVIDIA B200\""));
  const std::string other = Submit(1, 3);
  EXPECT_EQ(Cli(0, {"wait", other, "--timeout", "60s"}).exit_code, 0);
  const v1::Job job = GetJob(2, id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_QUEUED);
  EXPECT_THAT(job.waiting_reason(), HasSubstr("NVIDIA B200"));
  EXPECT_THAT(job.waiting_reason(), HasSubstr("h0: cpu (reference kernels)"));
  EXPECT_THAT(Cli(0, {"show", id}).err, HasSubstr("stays queued until one joins"));
}

TEST_F(FleetEndToEndTest, EachDaemonsPageShowsTheWholeFleet) {
  const CommandResult dom = Chromium(dir_, {"--dump-dom"}, "http://" + http_[1] + "/");
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_THAT(dom.out, HasSubstr("fleet: "));
  for (int i = 0; i < kDaemons; ++i) {
    EXPECT_THAT(dom.out, HasSubstr(absl::StrCat(Host(i), " #0 cpu (reference kernels) · serving")));
  }
}

TEST_F(FleetEndToEndTest, EveryIdleDaemonsHealthFollowsTheDatabaseDownAndUpAgain) {
  // Nobody submits: the daemons' own heartbeats must find the outage and the recovery. A
  // heartbeat is 1 s; the bound leaves room for a loaded machine.
  using grpc::health::v1::HealthCheckResponse;
  AwaitHealthOfAll(HealthCheckResponse::SERVING, absl::Seconds(10));
  const std::string earlier = Submit(0, 3);
  AwaitState(0, earlier, v1::JOB_STATE_SUCCEEDED);
  absl::StatusOr<CommandResult> stopped =
      RunCommand({LOCAL_POSTGRES_PATH, "stop", pg_dir_}, {}, dir_);
  ASSERT_TRUE(stopped.ok() && stopped->exit_code == 0);
  const absl::Duration down = AwaitHealthOfAll(HealthCheckResponse::NOT_SERVING, absl::Seconds(15));
  // Meanwhile a client hears that the daemon answered and its store is away: never that the
  // daemon cannot be reached, never the store's SQL.
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"watch", earlier}, std::vector<std::string>{"show", earlier},
        std::vector<std::string>{"jobs"}}) {
    const CommandResult r = Cli(1, command);
    EXPECT_EQ(r.exit_code, 4) << command[0] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("answered, but cannot serve now: postgresql:")) << command[0];
    EXPECT_THAT(r.err, testing::Not(HasSubstr("cannot reach"))) << command[0];
    for (const char* sql : {"SELECT", "FROM jobs", "WHERE"}) {
      EXPECT_THAT(r.err, testing::Not(HasSubstr(sql))) << command[0] << ": " << r.err;
    }
  }
  absl::StatusOr<CommandResult> started =
      RunCommand({LOCAL_POSTGRES_PATH, "start", pg_dir_}, {}, dir_);
  ASSERT_TRUE(started.ok() && started->exit_code == 0) << (started.ok() ? started->err : "");
  EXPECT_EQ(std::string(absl::StripTrailingAsciiWhitespace(started->out)), store_);
  const absl::Duration up = AwaitHealthOfAll(HealthCheckResponse::SERVING, absl::Seconds(15));
  std::cerr << "NOT_SERVING after " << down << ", SERVING again after " << up << "\n";
  // Serving again means it: a job submitted now runs.
  const std::string job = Submit(1, 3);
  AwaitState(2, job, v1::JOB_STATE_SUCCEEDED);
}

TEST_F(FleetEndToEndTest, BadStoreUrlsAndAnUnreachableDatabaseStopTheStartNamingTheFlag) {
  for (const std::string& store :
       {std::string("mysql://db/jobs"), std::string("sqlite://relative.db"),
        absl::StrCat("postgresql:///postgres?host=", dir_, "/nowhere&connect_timeout=2")}) {
    absl::StatusOr<CommandResult> r = RunCommand(DaemonArgv(5, store), {}, dir_);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->exit_code, 2) << store;
    EXPECT_THAT(r->err + r->out, HasSubstr("--store")) << store;
  }
}

}  // namespace
}  // namespace gpuprobe
