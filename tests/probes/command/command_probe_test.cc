// The command probe with test executables that succeed, exit non-zero, hang, print garbage,
// print 100 MB, ignore SIGTERM, or leave children behind: each ends as a clear job error and
// nothing of it is left running.
#include "server/probes/command/command_probe.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cpu_backend.h"
#include "server/probes/command/command_descendants.h"
#include "server/probes/command/command_registrations.h"
#include "server/probes/command/command_runner.h"
#include "tests/probes/resolved_spec.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;

class CommandProbeTest : public ::testing::Test {
 protected:
  testing_support::ScopedTempDir temp_{"gpuprobe_command"};  // removed last

  void SetUp() override {
    dir_ = temp_.path();
    std::filesystem::create_directory(dir_ + "/artifacts");
  }

  // A shell script registered as `name`, with a parameter t (PROBE_T, 1..64, default 6), axes
  // t and union, and small bounds.
  v1::CommandRegistration Script(const std::string& name, const std::string& body) {
    const std::string path = dir_ + "/" + name + ".sh";
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    v1::CommandRegistration c;
    c.set_name(name);
    c.set_path(path);
    v1::CommandParam* t = c.add_params();
    t->set_name("t");
    t->set_type(v1::CommandParam::INTEGER);
    t->set_min(1);
    t->set_max(64);
    t->set_default_value("6");
    t->set_env("PROBE_T");
    c.add_axes("t");
    c.add_axes("union");
    c.set_max_seconds(2);
    c.set_max_output_bytes(1 << 20);
    c.set_max_lines(1000);
    return c;
  }

  struct Ran {
    JobOutcome outcome;
    std::vector<v1::JobEvent> events;
    int group = 0;
  };
  // Registers the script and runs a job of it with `values` on `on` (else a cpu backend that
  // remembers its process group).
  Ran Run(const std::string& name, const std::string& body,
          std::map<std::string, std::string> values = {}, Backend* on = nullptr) {
    v1::CommandRegistration c = Script(name, body);
    CommandProbe probe({c});
    v1::ProbeRequest request;
    request.set_probe("command");
    (*request.mutable_param_values())["command"] = name;
    for (const auto& [k, v] : values) (*request.mutable_param_values())[k] = v;
    absl::StatusOr<ProbeSpec> resolved = probe.Resolve(request);
    EXPECT_TRUE(resolved.ok()) << resolved.status();
    Ran ran;
    RecordingCpu recording(&ran.group);
    Backend& device = on != nullptr ? *on : recording;
    const std::string artifacts = dir_ + "/artifacts/" + name;
    std::filesystem::create_directory(artifacts);
    const std::atomic<bool> cancelled{false};
    ran.outcome = probe.Run(
        {.job_id = "job-1", .spec = *resolved, .artifact_dir = artifacts}, device,
        [&](v1::JobEvent e) { ran.events.push_back(std::move(e)); }, cancelled);
    return ran;
  }

  // The cpu backend, noting the process group the probe calls its own.
  class RecordingCpu final : public CpuBackend {
   public:
    explicit RecordingCpu(int* group) : group_(group) {}
    void SetOwnProcessGroup(int group) override {
      if (group != 0) *group_ = group;
    }

   private:
    int* group_;
  };

  // The cpu backend with telemetry: after the command ended, its readings list the command's
  // process (its group's leader) on the device `held` times (-1: always), as a driver tearing
  // its context down would.
  class HoldingCpu final : public CpuBackend {
   public:
    explicit HoldingCpu(int held) : held_(held) {}
    void SetOwnProcessGroup(int group) override {
      if (group != 0) command_ = group;
      ended_ = group == 0 && command_ != 0;
    }
    std::optional<TelemetrySample> SampleTelemetry() override {
      TelemetrySample reading;
      if (ended_ && (held_ < 0 || readings_after_end_ < held_)) {
        reading.foreign_processes.push_back({.pid = command_, .name = "probe"});
      }
      readings_after_end_ += ended_;
      return reading;
    }
    int command() const { return command_; }
    int readings_after_end() const { return readings_after_end_; }

   private:
    const int held_;
    int command_ = 0;
    bool ended_ = false;
    int readings_after_end_ = 0;
  };

  static void ExpectNothingLeft(int group) {
    ASSERT_NE(group, 0);
    for (int i = 0; i < 100 && LiveProcessesOfGroup(group) > 0; ++i) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    EXPECT_EQ(LiveProcessesOfGroup(group), 0) << "processes of group " << group << " live on";
  }

  std::string Artifact(const std::string& name, const std::string& file) {
    std::ifstream in(dir_ + "/artifacts/" + name + "/" + file);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::string dir_;
};

TEST_F(CommandProbeTest, ATableBecomesOneResultPerRowWithItsParametersAndDevice) {
  const Ran ran = Run("seed", R"(echo "# T=$PROBE_T CUDA=$CUDA_VISIBLE_DEVICES"
printf 't\tunion\tgu_us\tvs\n1\t10\t8.5\t2.0292x\n%s\t20\t9.5\t1.0000x\n' "$PROBE_T"
echo "done" >&2)",
                      {{"t", "7"}});
  ASSERT_TRUE(ran.outcome.status.ok()) << ran.outcome.status;
  EXPECT_EQ(ran.outcome.results, 2);
  std::vector<v1::Result> results;
  for (const auto& e : ran.events) {
    if (e.has_result()) results.push_back(e.result());
  }
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].axes(0).name(), "t");
  EXPECT_EQ(results[1].axes(0).int_value(), 7);
  EXPECT_EQ(results[1].axes(1).int_value(), 20);
  ASSERT_EQ(results[0].metrics_size(), 2);
  EXPECT_EQ(results[0].metrics(0).name(), "gu_us");
  EXPECT_DOUBLE_EQ(results[0].metrics(0).median(), 8.5);
  EXPECT_DOUBLE_EQ(results[0].metrics(1).median(), 2.0292);  // the seed's "2.0292x"
  EXPECT_EQ(results[0].device(), "cpu (reference kernels)");
  EXPECT_THAT(Artifact("seed", "stdout.txt"), HasSubstr("# T=7 CUDA=0"));
  EXPECT_EQ(Artifact("seed", "stderr.txt"), "done\n");
  ExpectNothingLeft(ran.group);
}

TEST_F(CommandProbeTest, ANonZeroExitFailsTheJobWithItsStatusAndLastStderrLine) {
  const Ran ran = Run("fails", "echo starting >&2; echo 'cannot open /dev/nvidia0' >&2; exit 3");
  EXPECT_EQ(ran.outcome.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(ran.outcome.status.message(),
              HasSubstr("command fails exited with status 3; its stderr ends: cannot open "
                        "/dev/nvidia0"));
  EXPECT_THAT(Artifact("fails", "stderr.txt"), HasSubstr("starting"));
  ExpectNothingLeft(ran.group);
}

TEST_F(CommandProbeTest, ALongLastStderrLineIsQuotedByItsEnd) {
  const Ran ran = Run("long", "printf 'x%.0s' $(seq 1000) >&2; echo ' the cause' >&2; exit 1");
  EXPECT_THAT(ran.outcome.status.message(), HasSubstr("its stderr ends: ...xxx"));
  EXPECT_THAT(std::string(ran.outcome.status.message()), EndsWith("xxx the cause"));
  EXPECT_LT(ran.outcome.status.message().size(), 400u);
  ExpectNothingLeft(ran.group);
}

TEST_F(CommandProbeTest, AHangIsStoppedAtMaxSecondsAndItsGroupKilled) {
  const absl::Time start = absl::Now();
  const Ran ran = Run("hangs", "echo started; sleep 600");
  EXPECT_EQ(ran.outcome.status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(ran.outcome.status.message(), HasSubstr("ran past max_seconds (2 s)"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(Artifact("hangs", "stdout.txt"), "started\n");
  ExpectNothingLeft(ran.group);
}

// A command that closes its output and runs on is held to max_seconds all the same (it held the
// device until the worker's watchdog before).
TEST_F(CommandProbeTest, ACommandThatClosesItsOutputIsStillStoppedAtMaxSeconds) {
  const absl::Time start = absl::Now();
  const Ran ran = Run("quiet", "printf 't\\tunion\\n1\\t2\\n'; exec >&- 2>&-; exec sleep 300");
  EXPECT_EQ(ran.outcome.status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(ran.outcome.status.message(), HasSubstr("ran past max_seconds (2 s)"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ExpectNothingLeft(ran.group);
}

TEST_F(CommandProbeTest, GarbageOutputIsADataLossNamingTheLine) {
  const Ran ran = Run("garbage", "printf 't\\tunion\\tus\\n1\\t2\\n'");
  EXPECT_EQ(ran.outcome.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(ran.outcome.status.message(),
              HasSubstr("stdout line 2: 2 cells, where the header has 3"));
  const Ran no_axis = Run("noaxis", "printf 'a\\tb\\n1\\t2\\n'");
  EXPECT_THAT(no_axis.outcome.status.message(), HasSubstr("no column \"t\", a declared axis"));
}

TEST_F(CommandProbeTest, HundredMegabytesOfOutputStopAtTheBoundAndKeepWhatFits) {
  const Ran ran = Run("floods", "head -c 104857600 /dev/zero | tr '\\0' 'x'");
  EXPECT_EQ(ran.outcome.status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(ran.outcome.status.message(), HasSubstr("max_output_bytes (1048576 bytes"));
  EXPECT_EQ(Artifact("floods", "stdout.txt").size(), 1u << 20);
  ExpectNothingLeft(ran.group);
}

TEST_F(CommandProbeTest, ACommandThatIgnoresSigtermIsKilledAfterTheGracePeriod) {
  const absl::Time start = absl::Now();
  const Ran ran = Run("stubborn", "trap '' TERM; echo started; sleep 600");
  EXPECT_EQ(ran.outcome.status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(ran.outcome.status.message(), HasSubstr("did not stop on SIGTERM within 2s"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ExpectNothingLeft(ran.group);
}

TEST_F(CommandProbeTest, ChildrenLeftBehindAreKilledAndNamed) {
  const Ran ran = Run("leaves", "sleep 600 & printf 't\\tunion\\n1\\t2\\n'; exit 0");
  EXPECT_EQ(ran.outcome.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(ran.outcome.status.message(), HasSubstr("left processes of its own running"));
  ExpectNothingLeft(ran.group);
}

// Processes whose command line is `sleep SECONDS`, from /proc.
int Sleeping(const std::string& seconds) {
  int n = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    std::ifstream in(entry.path() / "cmdline");
    const std::string line(std::istreambuf_iterator<char>(in), {});
    n += line == "sleep" + std::string(1, '\0') + seconds + std::string(1, '\0');
  }
  return n;
}

TEST_F(CommandProbeTest, WhatLeavesTheProcessGroupIsKilledAllTheSame) {
  // Issue 55, item 2: a child in a session of its own, a daemon's double fork and a child that
  // cleared its environment all outlived a job that reported success.
  const Ran ran = Run("escapes", R"(setsid sleep 3171 >/dev/null 2>&1 </dev/null &
python3 -c 'import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "3172"])
    os._exit(0)
os.wait()' >/dev/null 2>&1 </dev/null
setsid env -i sleep 3173 >/dev/null 2>&1 </dev/null &
sleep 1; printf 't\tunion\n1\t2\n')");
  EXPECT_EQ(ran.outcome.status.code(), absl::StatusCode::kFailedPrecondition) << ran.outcome.status;
  EXPECT_THAT(ran.outcome.status.message(), HasSubstr("left processes of its own running"));
  // Gone when the job ends: the run waited for them.
  EXPECT_EQ(Sleeping("3171"), 0);
  EXPECT_EQ(Sleeping("3172"), 0);
  EXPECT_EQ(Sleeping("3173"), 0);
  ExpectNothingLeft(ran.group);
}

// On a device with a process list (NVML), the job ends only once the device lists no process of
// its command: a job whose command's process stays listed fails, saying so.
TEST_F(CommandProbeTest, TheJobEndsOnlyOnceTheDeviceListsNoProcessOfItsCommand) {
  const std::string table = R"(printf 't\tunion\tgu_us\n1\t10\t8.5\n')";
  HoldingCpu released(3);
  const Ran ran = Run("released", table, {}, &released);
  ASSERT_TRUE(ran.outcome.status.ok()) << ran.outcome.status;
  EXPECT_EQ(ran.outcome.results, 1);
  EXPECT_EQ(released.readings_after_end(), 4) << "read until the 4th reading listed none";

  HoldingCpu held(-1);
  const absl::Time start = absl::Now();
  const Ran stuck = Run("held", table, {}, &held);
  EXPECT_EQ(stuck.outcome.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(stuck.outcome.status.message(),
              HasSubstr(absl::StrCat("the device still lists processes of the command ",
                                     held.command(), " (probe) after 5s")));
  EXPECT_EQ(stuck.outcome.results, 0);
  EXPECT_GE(absl::Now() - start, absl::Seconds(5));
}

TEST_F(CommandProbeTest, ParametersAreDeclaredAndBoundedNeverAPathOrAShellWord) {
  CommandProbe probe({Script("seed", "true")});
  auto refused = [&](std::map<std::string, std::string> values) {
    v1::ProbeRequest request;
    request.set_probe("command");
    for (const auto& [k, v] : values) (*request.mutable_param_values())[k] = v;
    absl::StatusOr<ProbeSpec> r = probe.Resolve(request);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  EXPECT_THAT(refused({{"command", "/bin/sh"}}),
              HasSubstr("param command: \"/bin/sh\" is not a registered command (this daemon's: "
                        "seed)"));
  EXPECT_THAT(refused({{"command", "seed"}, {"t", "65"}}),
              HasSubstr("param t: 65 is outside [1, 64]"));
  EXPECT_THAT(refused({{"command", "seed"}, {"t", "6; rm -rf /"}}),
              HasSubstr("param t: \"6; rm -rf /\" is not an integer"));
  EXPECT_THAT(refused({{"command", "seed"}, {"path", "/tmp/x"}}),
              HasSubstr("param path: command seed takes no such parameter (it takes t)"));
  CommandProbe none({});
  v1::ProbeRequest request;
  request.set_probe("command");
  EXPECT_EQ(none.Resolve(request).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(CommandProbeTest, ValuesArePassedInCanonicalFormNeverAsAFlagOrAPathUnlessAllowed) {
  v1::CommandRegistration c = Script("seed", "true");
  v1::CommandParam* label = c.add_params();
  label->set_name("label");
  label->set_type(v1::CommandParam::STRING);
  label->set_max_length(64);
  label->set_default_value("run");
  label->set_arg("--label");
  CommandProbe probe({c});
  auto resolve = [&](std::map<std::string, std::string> values) {
    v1::ProbeRequest request;
    request.set_probe("command");
    (*request.mutable_param_values())["command"] = "seed";
    for (const auto& [k, v] : values) (*request.mutable_param_values())[k] = v;
    return probe.Resolve(request);
  };
  for (const std::string t : {" 5", "+5", "05"}) {
    absl::StatusOr<ProbeSpec> r = resolve({{"t", t}});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(Resolved<v1::CommandProbeParams>(*r).values().at("t"), "5") << "\"" << t << "\"";
  }
  EXPECT_THAT(resolve({{"label", "--help"}}).status().message(),
              HasSubstr("param label: \"--help\" starts with '-'"));
  EXPECT_THAT(resolve({{"label", "../../../etc/passwd"}}).status().message(),
              HasSubstr("param label: \"../../../etc/passwd\" holds '/' or \"..\""));
  EXPECT_THAT(resolve({{"label", "a/b"}}).status().message(), HasSubstr("allow_paths"));
  label->set_allow_paths(true);
  CommandProbe paths({c});
  v1::ProbeRequest request;
  request.set_probe("command");
  (*request.mutable_param_values())["command"] = "seed";
  (*request.mutable_param_values())["label"] = "data/run-1";
  EXPECT_TRUE(paths.Resolve(request).ok());
}

TEST_F(CommandProbeTest, RegistrationsAreCheckedAtTheDaemonsStart) {
  const std::string script = dir_ + "/ok.sh";
  std::ofstream(script) << "#!/bin/sh\n";
  chmod(script.c_str(), 0755);
  auto refused = [](std::vector<std::string> flags, std::string file = "") {
    absl::StatusOr<std::vector<v1::CommandRegistration>> r = LoadCommandRegistrations(flags, file);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  EXPECT_THAT(refused({"seed=relative/path"}),
              HasSubstr("is not an absolute path to an executable"));
  const std::string plain = dir_ + "/plain.txt";
  std::ofstream(plain) << "not a program\n";
  chmod(plain.c_str(), 0644);
  EXPECT_THAT(refused({"seed=" + plain}), HasSubstr("is not an absolute path to an executable"));
  EXPECT_THAT(refused({"no path"}), HasSubstr("--probe-command: \"no path\" is not NAME=PATH"));
  EXPECT_THAT(refused({"a=" + script, "a=" + script}), HasSubstr("\"a\" is registered twice"));
  std::ofstream(dir_ + "/bad.json")
      << R"({"commands": [{"name": "x", "path": ")" << script
      << R"(", "params": [{"name": "t", "type": "INTEGER", "env": "T", "arg": "--t"}]}]})";
  EXPECT_THAT(refused({}, dir_ + "/bad.json"), HasSubstr("param t: give one of env and arg"));
  absl::StatusOr<std::vector<v1::CommandRegistration>> ok =
      LoadCommandRegistrations({"seed=" + script}, "");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].max_seconds(), 600u);  // the default bound, filled in
}

}  // namespace
}  // namespace gpuprobe
