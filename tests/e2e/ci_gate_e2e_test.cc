// End to end: deploy/ci-gate.sh against gpuprobed on the cpu backend finds its baseline history
// by label, says unsure while the history is too short, maps compare's verdicts to its exit
// code, and catches a known slowdown (each timed kernel run eight times: --cpu-repeat 8).
//
// Whether it passes identical code is not asserted here: the CI machine (a 2-vCPU VM) runs at half
// speed for tens of seconds at a time, and five baseline jobs bound that noise only loosely
// (t factor 2.8); the method's coverage is unit-tested in tests/measure/comparison_test.cc. Five,
// not three (t factor 4.3): one half-speed job among three hides even an 8x slowdown.
#include <stdlib.h>

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/subprocess.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;
using testing_support::ChildProcess;
using testing_support::CommandResult;
using testing_support::RunCommand;

class CiGateTest : public testing::Test {
 protected:
  testing_support::ScopedTempDir temp_{"gpuprobe_gate"};  // removed last

  void SetUp() override { dir_ = temp_.path(); }

  void Start(int cpu_repeat, const std::vector<std::string>& env = {}) {
    daemon_.reset();
    absl::StatusOr<ChildProcess> daemon = ChildProcess::Start(
        {GPUPROBED_PATH, "--listen", "127.0.0.1:0", "--backend", "cpu", "--http", "", "--data-dir",
         dir_ + "/data", "--cpu-repeat", std::to_string(cpu_repeat)},
        dir_ + "/daemon.log", env);
    ASSERT_TRUE(daemon.ok()) << daemon.status();
    daemon_.emplace(*std::move(daemon));
    absl::StatusOr<std::string> server = daemon_->GrpcAddress();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *server;
  }

  // The gate on one commit of one branch, a small sweep of 16 kept reps per arm.
  CommandResult Gate(const std::string& commit, const std::string& branch) {
    absl::StatusOr<CommandResult> r =
        RunCommand({CI_GATE_PATH, "--experts", "32", "--hidden", "1024", "--ff", "256",
                    "--selected", "4", "--t", "2", "--reps", "17"},
                   {"GPUPROBE=" GPUPROBE_PATH, "GPUPROBE_SERVER=" + server_, "CI_COMMIT=" + commit,
                    "CI_BRANCH=" + branch, "GATE_THRESHOLD=10%"},
                   dir_, absl::Seconds(300));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  // `gpuprobe ARGS...` against the daemon.
  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {GPUPROBE_PATH, "--server", server_});
    absl::StatusOr<CommandResult> r = RunCommand(args, {}, dir_, absl::Seconds(300));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  std::string dir_, server_;
  std::optional<ChildProcess> daemon_;
};

// The slower arms in the tally of compare's first comparison ("F faster, S slower, ..."); -1 if
// none.
int Slower(const std::string& out) {
  std::smatch tally;
  if (!std::regex_search(out, tally, std::regex(R"(\d+ faster, (\d+) slower)"))) return -1;
  return std::stoi(tally[1]);
}

// The gate's exit code as its output says it should be: 6 when an arm is slower, and, where a
// slower verdict was confirmed by a run again (stderr: "K of N slower arm(s) slower again"), when
// one stayed slower.
int ExpectedExit(const CommandResult& gate) {
  std::smatch confirmed;
  if (std::regex_search(gate.err, confirmed,
                        std::regex(R"((\d+) of \d+ slower arm\(s\) slower again)"))) {
    return std::stoi(confirmed[1]) > 0 ? 6 : 0;
  }
  return Slower(gate.out) > 0 ? 6 : 0;
}

// The job ids a gate's first comparison names, as "N baseline jobs (...) -> CAND": a regex.
const char* const kFiveBaselineJobs =
    R"(5 baseline jobs \(job-[0-9]+, job-[0-9]+, job-[0-9]+, job-[0-9]+, job-[0-9]+\) -> )"
    R"(job-[0-9]+ \(candidate\))";

TEST_F(CiGateTest, FindsItsBaselineMapsTheVerdictToItsExitCodeAndCatchesAKnownSlowdown) {
  Start(1);
  const CommandResult first = Gate("a1", "main");
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.err, HasSubstr("no main baseline"));
  // One and two baseline jobs: every arm unsure, and why.
  const CommandResult second = Gate("a2", "main");
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr("0 faster, 0 slower, 0 same, 3 unsure"));
  EXPECT_THAT(second.out,
              HasSubstr("note: unsure: 1 baseline job; job-to-job noise unknown (at least 3"));
  for (const char* commit : {"a3", "a4", "a5"}) {  // judged against 2-4 jobs: any verdict
    const CommandResult more = Gate(commit, "main");
    EXPECT_EQ(more.exit_code, ExpectedExit(more)) << more.out << more.err;
  }

  // Another branch is compared with main's history, every arm, and exits 6 exactly when an arm
  // is slower.
  const CommandResult same = Gate("b1", "feature");
  EXPECT_THAT(same.out, testing::ContainsRegex(absl::StrCat(
                            kFiveBaselineJobs, ", threshold 10.0%, 95% intervals \\(history\\)")));
  EXPECT_THAT(same.out, testing::ContainsRegex("per-slot +1 +4 +4 "));
  EXPECT_THAT(same.out, testing::ContainsRegex("per-slot +2 +8 +8 "));
  ASSERT_GE(Slower(same.out), 0) << same.out;
  EXPECT_EQ(same.exit_code, ExpectedExit(same)) << same.out << same.err;

  // The same store, each timed kernel run eight times: a real 8x slowdown, beyond any swing of
  // the machine's speed between jobs, confirmed by the candidate's run again.
  Start(8);
  const CommandResult slower = Gate("c1", "feature");
  EXPECT_EQ(slower.exit_code, 6) << slower.out << slower.err;
  EXPECT_THAT(slower.out, testing::ContainsRegex(kFiveBaselineJobs));
  EXPECT_EQ(Slower(slower.out), 3) << slower.out;
  EXPECT_THAT(slower.err, HasSubstr("3 of 3 slower arm(s) slower again in every re-run"));
}

// compare --confirm runs a slower candidate again: a slowdown of that one job (a fault injected
// into it alone) is not confirmed, and the gate passes; without --confirm it fails.
TEST_F(CiGateTest, ASlowdownThatTheCandidatesRunAgainDoesNotShowIsNotConfirmed) {
  Start(1, {"GPUPROBE_ALLOW_FAULTS=1"});
  const std::vector<std::string> sweep = {"--experts",  "32", "--hidden", "1024", "--ff",   "256",
                                          "--selected", "4",  "--t",      "2",    "--reps", "17"};
  auto job = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"submit"};
    args.insert(args.end(), sweep.begin(), sweep.end());
    args.insert(args.end(), extra.begin(), extra.end());
    const CommandResult submitted = Cli(args);
    const std::string id = submitted.out.substr(0, submitted.out.find('\n'));
    EXPECT_EQ(Cli({"wait", id}).exit_code, 0);
    return id;
  };
  const std::string base = job({});
  // 1 ms more in every sample: sections of about 2-5 ms on this machine grow by 2 ms.
  const std::string candidate = job({"--label", "gpuprobe.fault=slow"});

  const CommandResult unconfirmed =
      Cli({"compare", base, candidate, "--threshold", "10%", "--fail-on", "slower"});
  EXPECT_EQ(unconfirmed.exit_code, 6) << unconfirmed.out << unconfirmed.err;
  EXPECT_EQ(Slower(unconfirmed.out), 3) << unconfirmed.out;

  const CommandResult confirmed = Cli(
      {"compare", base, candidate, "--threshold", "10%", "--fail-on", "slower", "--confirm", "1"});
  EXPECT_EQ(confirmed.exit_code, 0) << confirmed.out << confirmed.err;
  EXPECT_THAT(confirmed.err, HasSubstr(absl::StrCat("running ", candidate, " again (1 of 1)")));
  EXPECT_THAT(confirmed.err, HasSubstr("0 of 3 slower arm(s) slower again in every re-run"));
  // Both comparisons are printed: the first, then the run again's.
  EXPECT_THAT(confirmed.out, HasSubstr(absl::StrCat("-> ", candidate, " (candidate)")));
  EXPECT_THAT(confirmed.out, HasSubstr("-> job-3 (candidate)"));
  const CommandResult again = Cli({"--format", "json", "show", "job-3"});
  EXPECT_THAT(again.out, HasSubstr(absl::StrCat(R"("gpuprobe.confirms":")", candidate, "\"")));
  EXPECT_THAT(again.out, testing::Not(HasSubstr("gpuprobe.fault")));
}

}  // namespace
}  // namespace gpuprobe
