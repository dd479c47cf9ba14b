// End to end against hostile but realistic use (issue: hardening): one daemon per data
// directory, worker faults (died idle, hung, hung and cancelled, hung at shutdown), and the
// command lines' exit codes. Real processes, cpu backend.
#include <signal.h>
#include <stdlib.h>

#include <optional>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "sqlite3.h"
#include "tests/e2e/grpc_health.h"
#include "tests/e2e/subprocess.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;
using testing_support::ChildProcess;
using testing_support::CommandResult;
using testing_support::RunCommand;

const std::vector<std::string> kSmall = {"--experts", "16",         "--hidden", "64",  "--ff",
                                         "32",        "--selected", "2",        "--t", "2"};

class DaemonHardeningTest : public testing::Test {
 protected:
  testing_support::ScopedTempDir temp_{"gpuprobe_hard"};  // removed last

  void SetUp() override { dir_ = temp_.path(); }

  // Starts gpuprobed (cpu backend, port 0, worker processes) with `extra` flags; test faults
  // allowed.
  void Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {
        GPUPROBED_PATH, "--listen", "127.0.0.1:0", "--backend",   "cpu",
        "--http",       "",         "--data-dir",  dir_ + "/data"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    absl::StatusOr<ChildProcess> daemon =
        ChildProcess::Start(argv, dir_ + "/daemon.log", {"GPUPROBE_ALLOW_FAULTS=1"});
    ASSERT_TRUE(daemon.ok()) << daemon.status();
    daemon_.emplace(*std::move(daemon));
    absl::StatusOr<std::string> server = daemon_->GrpcAddress();
    ASSERT_TRUE(server.ok()) << server.status() << daemon_->Log();
    server_ = *server;
  }

  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {GPUPROBE_PATH, "--server", server_});
    absl::StatusOr<CommandResult> r = RunCommand(args, {}, dir_);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  grpc::health::v1::HealthCheckResponse::ServingStatus Health() {
    return testing_support::CheckHealth(server_);
  }
  // How long until the health is `status` (at most `timeout`, then a failure).
  absl::Duration AwaitHealth(grpc::health::v1::HealthCheckResponse::ServingStatus status,
                             absl::Duration timeout) {
    const absl::Time start = absl::Now();
    while (absl::Now() - start < timeout) {
      if (Health() == status) return absl::Now() - start;
      absl::SleepFor(absl::Milliseconds(50));
    }
    ADD_FAILURE() << "health did not become " << status << " in " << timeout;
    return timeout;
  }

  // The daemon's SQLite store, opened by another connection (null and a failure if it cannot
  // be). Its writes wait for the daemon's write in flight, as the daemon's wait for theirs.
  sqlite3* OpenStoreBehindTheDaemon() {
    sqlite3* db = nullptr;
    const int opened = sqlite3_open_v2((dir_ + "/data/gpuprobe.sqlite").c_str(), &db,
                                       SQLITE_OPEN_READWRITE, nullptr);
    EXPECT_EQ(opened, SQLITE_OK) << sqlite3_errmsg(db);
    if (opened != SQLITE_OK) {
      sqlite3_close(db);
      return nullptr;
    }
    sqlite3_busy_timeout(db, 30000);
    return db;
  }

  // Queues a small sweep (plus `extra` flags); returns its job id.
  std::string Submit(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"submit", "--reps", "3"};
    args.insert(args.end(), kSmall.begin(), kSmall.end());
    args.insert(args.end(), extra.begin(), extra.end());
    const CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
    return lines.empty() ? "" : lines.back();
  }

  void AwaitRunning(const std::string& job) {
    for (int i = 0; i < 200; ++i) {
      if (Cli({"show", job}).err.find(": running") != std::string::npos) return;
      absl::SleepFor(absl::Milliseconds(50));
    }
    ADD_FAILURE() << job << " never ran";
  }

  // A daemon whose running job's worker has stopped itself (and a watchdog too long to end
  // it); returns the job's id.
  std::string StartWithAStuckJob() {
    Start({"--min-watchdog-seconds", "600"});
    const std::string hung = Submit({"--label", "gpuprobe.fault=hang"});
    AwaitRunning(hung);
    return hung;
  }

  std::string dir_, server_;
  std::optional<ChildProcess> daemon_;
};

// A worker stopped (SIGSTOP) while idle does not take the next job: it is replaced once it has
// not answered for 10 s, and the job runs on the fresh worker, as its first attempt.
TEST_F(DaemonHardeningTest, AJobHandedToAWorkerStoppedWhileIdleRunsOnAFreshWorker) {
  Start();
  std::smatch ready;
  const std::string log = daemon_->Log();
  ASSERT_TRUE(std::regex_search(log, ready, std::regex("device worker ([0-9]+) ready"))) << log;
  const pid_t worker = std::stoi(ready[1]);
  ASSERT_EQ(kill(worker, SIGSTOP), 0);
  const std::string job = Submit();
  const CommandResult waited = Cli({"wait", job, "--timeout", "60s"});
  EXPECT_EQ(waited.exit_code, 0) << waited.err << daemon_->Log();
  EXPECT_THAT(Cli({"show", job}).err, HasSubstr("succeeded | "));
  EXPECT_THAT(Cli({"show", job}).err, HasSubstr("| attempts 1 |"));
  EXPECT_THAT(daemon_->Log(), HasSubstr("it did not take a job within 10 s"));
  EXPECT_NE(kill(worker, 0), 0) << "the stopped worker is killed and reaped";
}

TEST_F(DaemonHardeningTest, ASecondDaemonOnTheSameDataDirRefusesToStartNamingThePid) {
  Start();
  absl::StatusOr<CommandResult> second =
      RunCommand({GPUPROBED_PATH, "--listen", "127.0.0.1:0", "--backend", "cpu", "--http", "",
                  "--data-dir", dir_ + "/data"},
                 {}, dir_, absl::Seconds(30));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->exit_code, 2);
  EXPECT_THAT(second->out + second->err, HasSubstr(dir_ + "/data"));
  EXPECT_THAT(second->out + second->err, HasSubstr("pid"));
  // The first daemon still serves.
  const std::string job = Submit();
  EXPECT_EQ(Cli({"wait", job, "--timeout", "60s"}).exit_code, 0);
}

TEST_F(DaemonHardeningTest, ASecondDaemonOnAnAddressInUseFailsToStartNamingTheFlag) {
  Start({"--http", "127.0.0.1:0"});
  absl::StatusOr<std::string> http = daemon_->HttpAddress();
  ASSERT_TRUE(http.ok()) << http.status();
  for (const auto& [flag, taken] :
       std::vector<std::pair<std::string, std::string>>{{"--listen", server_}, {"--http", *http}}) {
    std::vector<std::string> argv = {GPUPROBED_PATH, "--backend",   "cpu",
                                     "--listen",     "127.0.0.1:0", "--http",
                                     "127.0.0.1:0",  "--data-dir",  dir_ + "/other"};
    argv.push_back(flag);
    argv.push_back(taken);
    absl::StatusOr<CommandResult> second = RunCommand(argv, {}, dir_, absl::Seconds(30));
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(second->exit_code, 2) << flag << ": " << second->err;
    EXPECT_THAT(second->out + second->err, HasSubstr(flag + ": cannot listen on")) << flag;
  }
  // Every call still reaches the first daemon.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Cli({"jobs"}).exit_code, 0);
}

TEST_F(DaemonHardeningTest, AWorkerThatDiedWhileIdleIsReplacedAndTheNextJobRuns) {
  Start();
  absl::StatusOr<std::string> pid_text = daemon_->AwaitLog("device worker ", absl::Seconds(5));
  ASSERT_TRUE(pid_text.ok());
  int pid = 0;
  ASSERT_TRUE(absl::SimpleAtoi(*pid_text, &pid)) << *pid_text;
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  absl::SleepFor(absl::Milliseconds(200));
  const std::string job = Submit();
  const CommandResult waited = Cli({"wait", job, "--timeout", "60s"});
  EXPECT_EQ(waited.exit_code, 0) << Cli({"show", job}).err;
}

TEST_F(DaemonHardeningTest, AHungWorkerIsKilledByTheWatchdogAndTheQueueGoesOn) {
  Start({"--min-watchdog-seconds", "1"});
  const std::string hung = Submit({"--label", "gpuprobe.fault=hang"});
  const std::string next = Submit();
  EXPECT_EQ(Cli({"wait", hung, "--timeout", "60s"}).exit_code, 1);
  EXPECT_THAT(Cli({"show", hung}).err, HasSubstr("watchdog"));
  EXPECT_EQ(Cli({"wait", next, "--timeout", "60s"}).exit_code, 0);
}

TEST_F(DaemonHardeningTest, CancelEndsAStuckJobWithinTheGracePeriod) {
  const std::string hung = StartWithAStuckJob();
  const absl::Time start = absl::Now();
  EXPECT_EQ(Cli({"cancel", hung}).exit_code, 0);
  EXPECT_EQ(Cli({"wait", hung, "--timeout", "60s"}).exit_code, 3);
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  const std::string next = Submit();
  EXPECT_EQ(Cli({"wait", next, "--timeout", "60s"}).exit_code, 0);
}

TEST_F(DaemonHardeningTest, SigtermStopsTheDaemonWhateverItsWorkerDoes) {
  StartWithAStuckJob();
  const absl::Time start = absl::Now();
  absl::StatusOr<int> code = daemon_->StopWith(SIGTERM, absl::Seconds(30));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0);
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
}

TEST_F(DaemonHardeningTest, BadCommandLinesExitWithTwoNamingTheFlag) {
  Start();
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--bogus", "info"},
                                             {"--format", "xml", "info"},
                                             {"jobs", "--limit", "0"},
                                             {"jobs", "--limit", "-5"},
                                             {"sweep", "--reps", "many"}}) {
    const CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
  }
  EXPECT_THAT(Cli({"--format", "xml", "info"}).err, HasSubstr("--format"));
  const CommandResult t0 = Cli({"check", "--t", "0"});
  EXPECT_EQ(t0.exit_code, 2);  // found by the daemon, a bad request all the same
  EXPECT_THAT(t0.err, HasSubstr("t: 0"));
  for (const std::vector<std::string>& flags :
       std::vector<std::vector<std::string>>{{"--listen", "127.0.0.1:99999"},
                                             {"--max-queued-jobs", "-1"},
                                             {"--max-message-bytes", "0"},
                                             {"--no-such-flag"}}) {
    std::vector<std::string> argv = {GPUPROBED_PATH, "--backend",    "cpu", "--http", "",
                                     "--data-dir",   dir_ + "/other"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    absl::StatusOr<CommandResult> r = RunCommand(argv, {}, dir_, absl::Seconds(30));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->exit_code, 2) << flags[0];
    EXPECT_THAT(r->out + r->err, HasSubstr(flags[0].substr(2))) << flags[0];
  }
}

TEST_F(DaemonHardeningTest, AFullStoreFailsTheJobAndTurnsHealthToNotServing) {
  Start({"--max-store-bytes", "65536"});
  std::vector<std::string> args = {"sweep", "--reps", "5000"};
  args.insert(args.end(), kSmall.begin(), kSmall.end());
  const CommandResult r = Cli(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("could not store"));
  EXPECT_EQ(Health(), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  const CommandResult refused = Cli({"submit", "--reps", "3"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("cannot write"));
}

TEST_F(DaemonHardeningTest, HealthFollowsTheStoreWhileAnotherProcessHoldsItsWriteLock) {
  // Nobody submits: the daemon's own heartbeat (3 s, then the store's 5 s busy timeout) must
  // find that its store cannot write, and that it can again.
  // The service's own name (as Kubernetes' grpc probe may ask for it) answers as the whole.
  using grpc::health::v1::HealthCheckResponse;
  constexpr char kServiceName[] = "gpuprobe.v1.ProbeService";
  Start();
  AwaitHealth(HealthCheckResponse::SERVING, absl::Seconds(10));
  sqlite3* db = OpenStoreBehindTheDaemon();
  ASSERT_NE(db, nullptr);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  const absl::Duration down = AwaitHealth(HealthCheckResponse::NOT_SERVING, absl::Seconds(30));
  EXPECT_EQ(testing_support::CheckHealth(server_, kServiceName), HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const absl::Duration up = AwaitHealth(HealthCheckResponse::SERVING, absl::Seconds(15));
  EXPECT_EQ(testing_support::CheckHealth(server_, kServiceName), HealthCheckResponse::SERVING);
  std::cerr << "NOT_SERVING after " << down << ", SERVING again after " << up << "\n";
  const std::string job = Submit();
  EXPECT_EQ(Cli({"wait", job, "--timeout", "60s"}).exit_code, 0);
}

TEST_F(DaemonHardeningTest, AJobsEndTheStoreRefusesIsKeptShownAndStoredOnceItCanBe) {
  // The store refuses writes while the job runs (another process holds its write lock): the
  // job fails for its results, and its end cannot be stored either. It must be kept, shown as
  // such, stored once the lock is gone, and never run again.
  Start();
  const std::string job = Submit({"--reps", "10000", "--experts", "64", "--hidden", "512", "--ff",
                                  "128", "--selected", "4", "--t", "3"});
  AwaitRunning(job);
  sqlite3* db = OpenStoreBehindTheDaemon();
  ASSERT_NE(db, nullptr);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  std::string shown;
  for (int i = 0; i < 600 && shown.find("| ending: failed, not stored yet") == std::string::npos;
       ++i) {
    absl::SleepFor(absl::Milliseconds(100));
    shown = Cli({"show", job}).err;
  }
  EXPECT_THAT(shown, HasSubstr(": running |"));
  EXPECT_THAT(shown, HasSubstr("| ending: failed, not stored yet: gpuprobed could not store the "
                               "job's end"));
  EXPECT_EQ(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const CommandResult waited = Cli({"wait", job, "--timeout", "60s"});
  EXPECT_EQ(waited.exit_code, 1) << waited.err;
  shown = Cli({"show", job}).err;
  EXPECT_THAT(shown, HasSubstr(": failed |"));
  EXPECT_THAT(shown, HasSubstr("attempts 1 |"));
  EXPECT_THAT(shown, HasSubstr("could not store the job's results"));
  EXPECT_THAT(shown, testing::Not(HasSubstr("ending:")));
  // The device is free again and the queue moves on.
  const std::string next = Submit();
  EXPECT_EQ(Cli({"wait", next, "--timeout", "60s"}).exit_code, 0);
  EXPECT_THAT(Cli({"show", job}).err, HasSubstr("attempts 1 |")) << "never run again";
}

TEST_F(DaemonHardeningTest, ACorruptStoredEventFailsShowAsItFailsWatch) {
  Start();
  const std::string job = Submit();
  ASSERT_EQ(Cli({"wait", job, "--timeout", "60s"}).exit_code, 0);
  sqlite3* db = OpenStoreBehindTheDaemon();
  ASSERT_NE(db, nullptr);
  // A row event's bytes damaged behind the daemon's back.
  ASSERT_EQ(sqlite3_exec(db, "UPDATE events SET event = X'FFFFFFFF' WHERE seq = 2", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{{"show", job}, {"watch", job}}) {
    const CommandResult r = Cli(command);
    EXPECT_EQ(r.exit_code, 1) << command[0] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("a stored event is corrupt")) << command[0];
  }
}

TEST_F(DaemonHardeningTest, SwappedOrMismatchedTlsFilesAreNamedNotReportedAsCannotListen) {
  absl::StatusOr<CommandResult> made = RunCommand(
      {"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
       "/CN=localhost", "-keyout", dir_ + "/key.pem", "-out", dir_ + "/cert.pem"},
      {}, dir_);
  ASSERT_TRUE(made.ok() && made->exit_code == 0);
  absl::StatusOr<CommandResult> r = RunCommand(
      {GPUPROBED_PATH, "--listen", "127.0.0.1:0", "--backend", "cpu", "--http", "", "--data-dir",
       dir_ + "/data", "--tls-cert", dir_ + "/key.pem", "--tls-key", dir_ + "/cert.pem"},
      {}, dir_, absl::Seconds(30));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_THAT(r->out + r->err, HasSubstr("tls-cert"));
  EXPECT_THAT(r->out + r->err, testing::Not(HasSubstr("cannot listen")));
  // A certificate and a key of two different pairs.
  made = RunCommand(
      {"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
       "/CN=localhost", "-keyout", dir_ + "/other-key.pem", "-out", dir_ + "/other-cert.pem"},
      {}, dir_);
  ASSERT_TRUE(made.ok() && made->exit_code == 0);
  r = RunCommand(
      {GPUPROBED_PATH, "--listen", "127.0.0.1:0", "--backend", "cpu", "--http", "", "--data-dir",
       dir_ + "/data", "--tls-cert", dir_ + "/cert.pem", "--tls-key", dir_ + "/other-key.pem"},
      {}, dir_, absl::Seconds(30));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_THAT(r->out + r->err, HasSubstr("tls-key: " + dir_ +
                                         "/other-key.pem is not the private "
                                         "key of the certificate in --tls-cert"));
  EXPECT_THAT(r->out + r->err, testing::Not(HasSubstr("cannot listen")));
}

TEST_F(DaemonHardeningTest, CheckKeepsItsLabels) {
  Start();
  std::vector<std::string> args = {"check", "--variant", "per-slot", "--label", "suite=hard"};
  args.insert(args.end(), kSmall.begin(), kSmall.end());
  ASSERT_EQ(Cli(args).exit_code, 0);
  const CommandResult jobs = Cli({"--format", "tsv", "jobs", "--label", "suite=hard"});
  EXPECT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_THAT(jobs.out, HasSubstr("job-1"));
}

}  // namespace
}  // namespace gpuprobe
