// gpuprobed's options: defaults filled in, both spellings of flag names, the repeatable
// --probe-command, and every bad value refused naming its flag and limit.
#include "server/options/daemon_options.h"

#include <stdlib.h>

#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class DaemonOptionsTest : public ::testing::Test {
 protected:
  // Parses `args` after the program name; flags come back to their defaults after each test.
  static absl::StatusOr<DaemonOptions> Parse(std::vector<std::string> args) {
    args.insert(args.begin(), "gpuprobed");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return ParseDaemonOptions(static_cast<int>(argv.size()), argv.data());
  }
  absl::FlagSaver saver_;
};

TEST_F(DaemonOptionsTest, DefaultsAreFilledIn) {
  setenv("XDG_STATE_HOME", "/state", 1);
  absl::StatusOr<DaemonOptions> o = Parse({});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->listen, "127.0.0.1:7070");
  EXPECT_EQ(o->listen_host, "127.0.0.1");
  EXPECT_TRUE(o->http);
  EXPECT_EQ(o->http_host, "127.0.0.1");
  EXPECT_EQ(o->http_port, 7071);
  EXPECT_EQ(o->data_dir, "/state/gpuprobed");
  EXPECT_EQ(o->isolation, "process");
  EXPECT_TRUE(o->limits.client_kernels);
  EXPECT_FALSE(o->devices.has_value());
  EXPECT_EQ(o->limits.max_queued_jobs, QueueLimits{}.max_queued_jobs);
  EXPECT_FALSE(o->fleet.host.empty());  // the machine's host name
  EXPECT_EQ(o->fleet.lease, absl::Seconds(30));
  EXPECT_EQ(o->fleet.heartbeat, absl::Seconds(3));  // a tenth of the lease
  EXPECT_EQ(o->worker_fd, -1);
  unsetenv("XDG_STATE_HOME");
}

TEST_F(DaemonOptionsTest, DashesAndUnderscoresBothSetFlags) {
  absl::StatusOr<DaemonOptions> o =
      Parse({"--data-dir=/d", "--max_queued_jobs", "7", "--http", "", "--devices", "0,2",
             "--host-name", "h1", "--lease-seconds", "120", "--isolation=none"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->data_dir, "/d");
  EXPECT_EQ(o->limits.max_queued_jobs, 7);
  EXPECT_FALSE(o->http);
  ASSERT_TRUE(o->devices.has_value());
  EXPECT_THAT(*o->devices, ElementsAre(0, 2));
  EXPECT_EQ(o->fleet.host, "h1");
  EXPECT_EQ(o->fleet.heartbeat, absl::Seconds(5));  // at most every 5 s
  EXPECT_EQ(o->isolation, "none");
  // A client's GPU code runs only in a worker of its own: none without workers.
  EXPECT_FALSE(o->limits.client_kernels);
}

TEST_F(DaemonOptionsTest, TheStoreComesFromTheEnvironmentUnlessTheFlagNamesOne) {
  // So that a password need not be in the process list.
  setenv("GPUPROBE_STORE", "postgresql://gpuprobe:secret@db/gpuprobe", 1);
  absl::StatusOr<DaemonOptions> from_env = Parse({});
  ASSERT_TRUE(from_env.ok()) << from_env.status();
  EXPECT_EQ(from_env->store, "postgresql://gpuprobe:secret@db/gpuprobe");
  absl::FlagSaver restore;
  absl::StatusOr<DaemonOptions> from_flag = Parse({"--store", "sqlite:///x/jobs.db"});
  ASSERT_TRUE(from_flag.ok()) << from_flag.status();
  EXPECT_EQ(from_flag->store, "sqlite:///x/jobs.db");
  unsetenv("GPUPROBE_STORE");
}

TEST_F(DaemonOptionsTest, AnEmptyStoreGivenOnTheCommandLineIsRefusedNotTakenForSqlite) {
  absl::StatusOr<DaemonOptions> empty = Parse({"--store", ""});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("store: given but empty"));
}

TEST_F(DaemonOptionsTest, ProbeCommandsRepeatInOrderAndReachTheWorker) {
  absl::StatusOr<DaemonOptions> o = Parse(
      {"--probe-command", "a=/bin/a,with,commas", "--backend", "cpu", "--probe-command=b=/bin/b",
       "--probe-commands", "/etc/cmds.json", "--cpu-repeat", "3", "--inject-delay-ns", "2500"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_THAT(o->probe_commands, ElementsAre("a=/bin/a,with,commas", "b=/bin/b"));
  EXPECT_THAT(o->WorkerArguments(1),
              ElementsAre("--backend=cpu", "--device=1", "--cpu_repeat=3", "--inject_delay_ns=2500",
                          "--log_level=info", "--probe_commands=/etc/cmds.json",
                          "--probe_command=a=/bin/a,with,commas", "--probe_command=b=/bin/b"));
}

TEST_F(DaemonOptionsTest, EveryBadValueIsRefusedNamingItsFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--max-queued-jobs", "0"}, "max-queued-jobs: 0; at least 1"},
      {{"--max-message-bytes", "100"}, "max-message-bytes: 100; at least 4096"},
      {{"--max-job-seconds", "0"}, "max-job-seconds: must be positive"},
      {{"--max-artifact-bytes", "-1"}, "max-artifact-bytes, max-store-bytes: must not be negative"},
      {{"--cpu-repeat", "101"}, "cpu-repeat: 101 is outside [1, 100]"},
      {{"--inject-delay-ns", "-1"}, "inject-delay-ns: -1 is outside [0, 1000000]"},
      {{"--inject-delay-ns", "1000001"}, "inject-delay-ns: 1000001 is outside [0, 1000000]"},
      {{"--min-watchdog-seconds", "0"}, "min-watchdog-seconds: must be positive"},
      {{"--lease-seconds", "0.5"}, "lease-seconds: 0.5 is outside [1, 3600]"},
      {{"--host-name", std::string(129, 'h')}, "(129 bytes)\" is longer than 128 bytes"},
      {{"--listen", "nohost"}, "listen: \"nohost\" is not HOST:PORT"},
      {{"--http", "h:70000"}, "http: \"h:70000\" is not HOST:PORT with a port in 0..65535"},
      {{"--listen", "127.0.0.1:103639"}, "listen: \"127.0.0.1:103639\" is not HOST:PORT"},
      {{"--listen", "127.0.0.1:38103abc"}, "listen: \"127.0.0.1:38103abc\" is not HOST:PORT"},
      {{"--listen", "127.0.0.1:-1"}, "listen: \"127.0.0.1:-1\" is not HOST:PORT"},
      {{"--listen", "127.0.0.1:+80"}, "listen: \"127.0.0.1:+80\" is not HOST:PORT"},
      {{"--listen", ":7070"}, "listen: \":7070\" is not HOST:PORT"},
      {{"--http", "::1:7071"}, "http: \"::1:7071\" is not HOST:PORT"},
      {{"--isolation", "thread"}, "isolation: \"thread\" is not process or none"},
      {{"--host-name", "../x"}, "host-name: \"../x\" is not a host name"},
      {{"--log-level", "bogus"}, "log-level: \"bogus\" is not trace, debug, info"},
      {{"--devices", "0,x"}, "devices: \"0,x\" is neither all nor a list like 0,1"},
      {{"--max-queued-jobs", "many"}, "--max-queued-jobs: "},
      {{"--frobnicate"}, "--frobnicate: no such flag"},
      {{"--tls-cert", "c.pem", "--tls-key", "k.pem", "--http", "0.0.0.0:7071"},
       "http: 0.0.0.0 is not loopback, and the HTTP API is plaintext"},
  };
  for (const auto& [args, message] : cases) {
    absl::FlagSaver restore;
    absl::StatusOr<DaemonOptions> o = Parse(args);
    ASSERT_FALSE(o.ok()) << args[0];
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument) << args[0];
    EXPECT_THAT(o.status().message(), HasSubstr(message));
  }
}

// Plaintext HTTP beside TLS: on loopback, or when asked for by name.
TEST_F(DaemonOptionsTest, PlaintextHttpBesideTlsIsLoopbackOrExplicit) {
  for (const std::string http : {"127.0.0.1:7071", "localhost:0", "[::1]:7071"}) {
    absl::FlagSaver restore;
    EXPECT_TRUE(Parse({"--tls-cert", "c.pem", "--tls-key", "k.pem", "--http", http}).ok()) << http;
  }
  EXPECT_TRUE(Parse({"--tls-cert", "c.pem", "--tls-key", "k.pem", "--http", "0.0.0.0:7071",
                     "--http-plaintext"})
                  .ok());
}

}  // namespace
}  // namespace gpuprobe
