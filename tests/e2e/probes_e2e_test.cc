// End to end: the probes through the real daemon (cpu backend, port 0) and the gpuprobe CLI:
// `probes`, `run` in every format, `submit --probe`, `show`, `watch` and `compare` of a probe
// other than moe-union, and clear errors for bad probe requests.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/api_json.h"
#include "gmock/gmock.h"
#include "gpuprobe/v1/probe.pb.h"
#include "gtest/gtest.h"
#include "tests/e2e/chromium.h"
#include "tests/e2e/subprocess.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;
using testing_support::ChildProcess;
using testing_support::CommandResult;
using testing_support::RunCommand;

// Two sizes, warm, event-timed, 12 reps: seconds on the cpu backend.
const std::vector<std::string> kReadParams = {"--param", "sizes_bytes=65536,131072",
                                              "--param", "default_sizes=false",
                                              "--param", "caches=warm",
                                              "--param", "timing=events",
                                              "--param", "reps=12"};

// The pid a command script wrote to `file`, once it has; 0 when it did not within 10 s.
pid_t AwaitPid(const std::string& file) {
  pid_t pid = 0;
  for (int i = 0; i < 500 && pid == 0; ++i) {
    std::ifstream(file) >> pid;
    if (pid == 0) absl::SleepFor(absl::Milliseconds(20));
  }
  return pid;
}

// Whether `pid` is a live process (a zombie that nobody reaped yet has ended).
bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

// Waits up to 10 s for `pid` to end; whether it did.
bool Ends(pid_t pid) {
  for (int i = 0; i < 500 && Alive(pid); ++i) absl::SleepFor(absl::Milliseconds(20));
  return !Alive(pid);
}

class ProbesEndToEndTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    temp_ = new testing_support::ScopedTempDir("gpuprobe_probes_e2e");
    dir_ = new std::string(temp_->path());
    // Two operator commands: a seed-like table, and one that hangs until it is stopped.
    WriteScript("table.sh", R"(echo "# CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
printf 't\tunion\tgu_us\n1\t10\t8.5\n2\t20\t9.5\n')");
    WriteScript("hang.sh", "echo $$ > " + *dir_ + "/hang.pid; sleep 600");
    // A hand-run probe as it was, under the file lock each one took.
    WriteScript("locked.sh",
                "exec flock -x " + *dir_ + "/measure.lock printf 'size\\tus\\n1\\t2.5\\n'");
    absl::StatusOr<ChildProcess> daemon = ChildProcess::Start(
        {GPUPROBED_PATH, "--listen", "127.0.0.1:0", "--backend", "cpu", "--http", "127.0.0.1:0",
         "--data-dir", *dir_ + "/data", "--probe-command", "table=" + *dir_ + "/table.sh",
         "--probe-command", "hang=" + *dir_ + "/hang.sh", "--probe-command",
         "locked=" + *dir_ + "/locked.sh"},
        *dir_ + "/daemon.log");
    ASSERT_TRUE(daemon.ok()) << daemon.status();
    daemon_ = new ChildProcess(*std::move(daemon));
    absl::StatusOr<std::string> server = daemon_->GrpcAddress();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = new std::string(*server);
    absl::StatusOr<std::string> http = daemon_->HttpAddress();
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = new std::string(*http);
  }
  void SetUp() override { ASSERT_NE(server_, nullptr) << "gpuprobed did not start"; }
  static void WriteScript(const std::string& name, const std::string& body) {
    const std::string path = *dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
  }
  static void TearDownTestSuite() {
    delete daemon_;
    delete server_;
    delete http_;
    delete dir_;
    delete temp_;
  }

  static CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {GPUPROBE_PATH, "--server", *server_});
    absl::StatusOr<CommandResult> r = RunCommand(args, {}, *dir_);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }
  static CommandResult RunRead(const std::string& format, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--format", format, "run", "read-bandwidth"};
    args.insert(args.end(), kReadParams.begin(), kReadParams.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return Cli(args);
  }

  static inline testing_support::ScopedTempDir* temp_ = nullptr;
  static inline std::string* dir_ = nullptr;
  static inline std::string* server_ = nullptr;
  static inline std::string* http_ = nullptr;
  static inline ChildProcess* daemon_ = nullptr;
};

TEST_F(ProbesEndToEndTest, ProbesListsEveryProbeWithItsParameters) {
  const CommandResult table = Cli({"probes"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("moe-union: MoE routed-union cost"));
  EXPECT_THAT(table.out, HasSubstr("read-bandwidth: streaming read"));
  EXPECT_THAT(table.out, HasSubstr("--param sizes_bytes=..."));
  const CommandResult json = Cli({"--format", "json", "probes"});
  v1::ListProbesResponse list;
  ASSERT_TRUE(ApiJsonToMessage(json.out, &list).ok()) << json.out;
  ASSERT_GE(list.probes_size(), 1);
  for (const v1::ProbeInfo& probe : list.probes()) {  // the table and the json list the same
    EXPECT_THAT(table.out, HasSubstr(probe.name() + ": ")) << probe.name();
  }
  EXPECT_THAT(table.out,
              HasSubstr("--param command=...  the registered command; one of table|hang"));
}

// A probe that needs no line outside its folder but its registration runs through the daemon
// and the CLI like any other: its parameters resolved, its arms timed, its results printed.
TEST_F(ProbesEndToEndTest, LaunchLatencyRunsThroughTheDaemonInEveryTiming) {
  const CommandResult tsv = Cli({"--format", "tsv", "run", "launch-latency", "--param",
                                 "grid_sizes=1,64", "--param", "reps=5"});
  ASSERT_EQ(tsv.exit_code, 0) << tsv.err;
  std::vector<std::string> rows;
  for (absl::string_view line : absl::StrSplit(tsv.out, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, "#")) rows.emplace_back(line);
  }
  ASSERT_EQ(rows.size(), 5u) << tsv.out;  // the header, then 2 grids x 2 timings
  EXPECT_THAT(rows[0], HasSubstr("grid_blocks\ttiming\tlaunch_us (us)"));
  EXPECT_THAT(rows[1], testing::StartsWith("1\tevents\t"));
  EXPECT_THAT(rows[4], testing::StartsWith("64\tgraph\t"));
  const CommandResult refused = Cli({"run", "launch-latency", "--param", "block_threads=2048"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("block_threads: 2048 is outside [1, 1024]"));
}

TEST_F(ProbesEndToEndTest, RunPrintsEachFormatAsOneParseableStream) {
  const CommandResult tsv = RunRead("tsv");
  ASSERT_EQ(tsv.exit_code, 0) << tsv.err;
  EXPECT_THAT(tsv.err, HasSubstr("(read-bandwidth) queued"));
  std::vector<std::string> rows;
  for (absl::string_view line : absl::StrSplit(tsv.out, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, "#")) rows.emplace_back(line);
  }
  ASSERT_EQ(rows.size(), 3u) << tsv.out;
  EXPECT_THAT(rows[0], HasSubstr("size_bytes\tcache\tread_us (us)"));
  EXPECT_THAT(rows[2], testing::StartsWith("131072\twarm\t"));

  const CommandResult csv = RunRead("csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const std::vector<std::string> lines = absl::StrSplit(csv.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << csv.out;
  // The job, its resolved parameters, then the result.
  EXPECT_EQ(lines[0],
            "job_id,probe,labels,sizes_bytes,default_sizes,caches,reps,timing,order,seed,"
            "require_clean,precision,max_seconds,size_bytes,cache,read_us,read_us_min,read_us_max,"
            "read_us_spread,read_us_low,read_us_high,read_us_kept,tbps,disturbance,verdict,"
            "impossible,sampling_end");
  EXPECT_THAT(lines[1],
              testing::MatchesRegex("job-[0-9]+,read-bandwidth,,\"65536,131072\",false,warm,12,"
                                    "events,fixed,1,false,,,65536,warm,.*,reps"));
  EXPECT_THAT(lines[1], HasSubstr(",11,"));  // 12 reps, rep 0 dropped

  const CommandResult json = RunRead("json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  int results = 0;
  for (absl::string_view line : absl::StrSplit(json.out, '\n', absl::SkipEmpty())) {
    v1::Result r;
    ASSERT_TRUE(ApiJsonToMessage(std::string(line), &r).ok()) << line;
    EXPECT_EQ(r.metrics(0).name(), "read_us");
    EXPECT_GT(r.derived(0).value(), 0.0);
    EXPECT_THAT(r.job_id(), testing::MatchesRegex("job-[0-9]+"));
    EXPECT_THAT(json.err, HasSubstr("gpuprobe: job " + r.job_id() + " (read-bandwidth) queued"));
    ++results;
  }
  EXPECT_EQ(results, 2);
}

TEST_F(ProbesEndToEndTest, SubmitShowWatchAndCompareWorkForAProbeJob) {
  std::vector<std::string> submit = {"submit",  "--probe",     "read-bandwidth",
                                     "--label", "branch=main", "--wait"};
  submit.insert(submit.end(), kReadParams.begin(), kReadParams.end());
  const CommandResult base = Cli(submit);
  ASSERT_EQ(base.exit_code, 0) << base.err;
  const std::string base_id = std::string(absl::StripTrailingAsciiWhitespace(base.out));
  submit[4] = "branch=feature";
  const CommandResult cand = Cli(submit);
  ASSERT_EQ(cand.exit_code, 0) << cand.err;
  const std::string cand_id = std::string(absl::StripTrailingAsciiWhitespace(cand.out));

  const CommandResult show = Cli({"--format", "csv", "show", cand_id});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  // The rows in run's csv schema, each naming its job, probe and labels.
  const std::vector<std::string> shown = absl::StrSplit(show.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(shown.size(), 3u) << show.out;
  EXPECT_TRUE(absl::StartsWith(shown[0], "job_id,probe,labels,sizes_bytes,"));
  for (size_t i = 1; i < shown.size(); ++i) {
    EXPECT_TRUE(absl::StartsWith(shown[i], cand_id + ",read-bandwidth,branch=feature,"))
        << shown[i];
  }
  const CommandResult watch = Cli({"--format", "tsv", "watch", cand_id});
  ASSERT_EQ(watch.exit_code, 0) << watch.err;
  EXPECT_THAT(watch.out, HasSubstr("65536\twarm\t"));

  const CommandResult compare = Cli({"--format", "csv", "compare", "label:branch=main", cand_id});
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  const std::vector<std::string> lines = absl::StrSplit(compare.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << compare.out;
  EXPECT_EQ(lines[0],
            "size_bytes,cache,base_read_us,candidate_read_us,ratio,ratio_low,ratio_high,verdict");
  // The page shows the job's results and plots its metric against its numeric axis.
  const CommandResult dom =
      testing_support::Chromium(*dir_, {"--dump-dom"}, "http://" + *http_ + "/#/jobs/" + cand_id);
  EXPECT_THAT(dom.out, HasSubstr("read_us against size_bytes"));
  EXPECT_THAT(dom.out, HasSubstr("<h2>Results</h2>"));
  EXPECT_THAT(dom.out, HasSubstr("131072"));
  // The trends view follows one arm's metric across the jobs labelled branch, per branch.
  const CommandResult trends = testing_support::Chromium(
      *dir_, {"--dump-dom"},
      "http://" + *http_ +
          "/#/trends?key=branch&base=main&arm=size_bytes%3D131072%2Ccache%3Dwarm&metric=read_us");
  ASSERT_EQ(trends.exit_code, 0) << trends.err;
  EXPECT_THAT(trends.out, HasSubstr("2 jobs with label branch")) << trends.out;
  EXPECT_THAT(trends.out, HasSubstr("read_us median of size_bytes=131072,cache=warm"));
  EXPECT_THAT(trends.out, HasSubstr("data-series=\"branch=feature\""));
  EXPECT_THAT(trends.out, HasSubstr("baseline: " + base_id + ", the newest with branch=main"));
  for (const std::string& id : {base_id, cand_id}) {
    EXPECT_THAT(trends.out, HasSubstr(">" + id + "</text>"));
  }
  // A moe-union sweep is another probe: refused, naming it.
  const CommandResult sweep = Cli({"submit", "--experts", "16", "--hidden", "64", "--ff", "32",
                                   "--selected", "2", "--t", "1", "--reps", "3", "--wait"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const std::string sweep_id = std::string(absl::StripTrailingAsciiWhitespace(sweep.out));
  const CommandResult mixed = Cli({"compare", base_id, sweep_id});
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_THAT(mixed.err, HasSubstr("moe-union"));
}

TEST_F(ProbesEndToEndTest, UploadSendsAModuleOnceAndRefusesAFileThatIsNone) {
  const std::string ptx = *dir_ + "/spin.ptx";
  std::ofstream(ptx) << ".version 8.0\n.target sm_90\n.address_size 64\n"
                        ".visible .entry spin()\n{\n ret;\n}\n";
  const CommandResult first = Cli({"upload", ptx});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.out,
              testing::MatchesRegex("[0-9a-f]{64}  .*spin.ptx  ptx, [0-9]+ bytes, spin\n"));
  const CommandResult again = Cli({"--format", "json", "upload", ptx});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("\"already_stored\":true"));
  EXPECT_THAT(again.out, HasSubstr(first.out.substr(0, 64)));
  const std::string text = *dir_ + "/notes.txt";
  std::ofstream(text) << "not a module\n";
  const CommandResult refused = Cli({"upload", text});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("notes.txt: module: text, but not PTX"));
  EXPECT_TRUE(refused.out.empty()) << refused.out;
}

TEST_F(ProbesEndToEndTest, KernelUploadsItsModulesAndTheCpuDaemonRefusesTheJob) {
  const std::string ptx = *dir_ + "/flip.ptx";
  std::ofstream(ptx) << ".version 8.0\n.target sm_90\n.address_size 64\n"
                        ".visible .entry flip(\n .param .u64 flip_param_0\n)\n{\n ret;\n}\n";
  const std::string spec = *dir_ + "/flip.json";
  std::ofstream(spec) << R"({"buffers": [{"name": "x", "dtype": "f32", "count": 256}],
    "arms": [{"name": "flip", "launches": [{"kernel": "flip", "grid": [1], "block": [256],
                                            "args": [{"buffer": "x"}]}]}]})";
  const CommandResult refused =
      Cli({"kernel", "--baseline", ptx, "--candidate", ptx, "--spec", spec, "--fail-on", "slower"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("the kernel probe needs a cuda device"));
  EXPECT_TRUE(refused.out.empty()) << refused.out;
  // The module was stored on the way.
  const CommandResult stored = Cli({"--format", "json", "upload", ptx});
  EXPECT_THAT(stored.out, HasSubstr("\"already_stored\":true"));
  const CommandResult unnamed = Cli({"kernel", "--module", "other=" + ptx, "--spec", spec});
  EXPECT_EQ(unnamed.exit_code, 2);
  EXPECT_THAT(unnamed.err, HasSubstr("names module \"build\", which no --module"));
  // One kernel from flags, without a spec file.
  const CommandResult flags =
      Cli({"kernel", "--module", "k=" + ptx, "--kernel", "flip", "--grid", "1", "--block", "256",
           "--buffer", "x=f32:256:uniform:0:1", "--arg", "x"});
  EXPECT_EQ(flags.exit_code, 1);
  EXPECT_THAT(flags.err, HasSubstr("the kernel probe needs a cuda device"));
  const CommandResult both =
      Cli({"kernel", "--module", "k=" + ptx, "--kernel", "flip", "--spec", spec});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("one of them"));
  // The CI recipe, from a runner without a GPU: the cpu daemon's refusal fails the gate, and no
  // summary is written for a job that never existed.
  const std::string summary = *dir_ + "/summary.md";
  absl::StatusOr<CommandResult> gate =
      RunCommand({KERNEL_GATE_PATH, spec, ptx, ptx, summary},
                 {"GPUPROBE=" GPUPROBE_PATH, "GPUPROBE_SERVER=" + *server_, "CI_COMMIT=abc"}, *dir_,
                 absl::Seconds(60));
  ASSERT_TRUE(gate.ok()) << gate.status();
  EXPECT_EQ(gate->exit_code, 1);
  EXPECT_THAT(gate->err, HasSubstr("the kernel probe needs a cuda device"));
  EXPECT_THAT(gate->err, HasSubstr("kernel-gate: exit 1"));
  std::ifstream written(summary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(written), {}), "");
  std::ofstream(*dir_ + "/bad.json")
      << R"({"arms": [{"name": "x", "launches": 3}], "reps": "many"})";
  const CommandResult bad =
      Cli({"kernel", "--baseline", ptx, "--candidate", ptx, "--spec", *dir_ + "/bad.json"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("params_json: not a gpuprobe.v1.KernelParams"));
}

TEST_F(ProbesEndToEndTest, BadProbeRequestsAreRefusedNamingTheProblem) {
  // Bad requests the daemon finds exit 2, as those the client finds.
  const CommandResult unknown = Cli({"run", "dense-gemv"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("probe: no probe \"dense-gemv\""));
  const CommandResult bad = Cli({"run", "read-bandwidth", "--param", "sizes_bytes=100"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("sizes_bytes: 100 is not a multiple of 16"));
  const CommandResult form = Cli({"run", "read-bandwidth", "--param", "sizes_bytes"});
  EXPECT_EQ(form.exit_code, 2);
  EXPECT_THAT(form.err, HasSubstr("--param: \"sizes_bytes\" is not of the form NAME=VALUE"));
  const CommandResult stray = Cli({"jobs", "--param", "a=b"});
  EXPECT_EQ(stray.exit_code, 2);
}

TEST_F(ProbesEndToEndTest, AnOperatorsCommandRunsThroughTheDaemonAndItsOutputIsKept) {
  const CommandResult submitted =
      Cli({"submit", "--probe", "command", "--param", "command=table", "--wait"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const std::string id = std::string(absl::StripTrailingAsciiWhitespace(submitted.out));
  const CommandResult tsv = Cli({"--format", "tsv", "show", id});
  ASSERT_EQ(tsv.exit_code, 0) << tsv.err;
  // Registered as NAME=PATH: its first column is its axis, its other numeric columns metrics.
  EXPECT_THAT(tsv.out, HasSubstr("t\tunion\tunion_spread\tgu_us\tgu_us_spread"));
  EXPECT_THAT(tsv.out, HasSubstr("2\t20\t-\t9.5\t-\t"));
  // Its whole stdout is an artifact of the job, where the daemon keeps artifacts.
  std::ifstream out(*dir_ + "/data/artifacts/" + id + "/stdout.txt");
  const std::string text((std::istreambuf_iterator<char>(out)), {});
  EXPECT_THAT(text, HasSubstr("# CUDA_VISIBLE_DEVICES=0"));

  // Compare reads a command's first metric column as its time (its columns carry no unit); one
  // sample a cell is too few for a verdict.
  const CommandResult again =
      Cli({"submit", "--probe", "command", "--param", "command=table", "--wait"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const CommandResult compare = Cli({"--format", "csv", "compare", id,
                                     std::string(absl::StripTrailingAsciiWhitespace(again.out))});
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_THAT(compare.out,
              HasSubstr("t,base_union,candidate_union,ratio,ratio_low,ratio_high,verdict\n"
                        "1,10,10,1,"));
  EXPECT_THAT(compare.out, HasSubstr(",too-few-reps\n"));
}

TEST_F(ProbesEndToEndTest, CancellingACommandJobKillsItsProcessGroup) {
  const CommandResult submitted = Cli({"submit", "--probe", "command", "--param", "command=hang"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const std::string id = std::string(absl::StripTrailingAsciiWhitespace(submitted.out));
  // Running once its script wrote its pid.
  const pid_t pid = AwaitPid(*dir_ + "/hang.pid");
  ASSERT_NE(pid, 0) << "the command never started";
  EXPECT_EQ(Cli({"cancel", id}).exit_code, 0);
  const CommandResult waited = Cli({"wait", id, "--timeout", "60s"});
  EXPECT_EQ(waited.exit_code, 3) << waited.err;  // cancelled
  EXPECT_TRUE(Ends(pid)) << "the command's process " << pid << " outlived its job";
}

TEST_F(ProbesEndToEndTest, AProbeThatTakesTheOldFileLockStillRuns) {
  const CommandResult run = Cli({"--format", "tsv", "run", "command", "--param", "command=locked"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out,
              HasSubstr("size\tus\tus_spread\tdisturbance\tverdict\timpossible\n1\t2.5\t-\t"));
}

TEST_F(ProbesEndToEndTest, StoppingTheDaemonKillsARunningCommand) {
  // A daemon of its own, stopped with SIGTERM while its command runs.
  const std::string dir = *dir_ + "/stopped";
  std::filesystem::create_directories(dir);
  WriteScript("stopped/hang.sh", "echo $$ > " + dir + "/hang.pid; sleep 600");
  absl::StatusOr<ChildProcess> daemon = ChildProcess::Start(
      {GPUPROBED_PATH, "--listen", "127.0.0.1:0", "--backend", "cpu", "--http", "", "--data-dir",
       dir + "/data", "--probe-command", "hang=" + dir + "/hang.sh"},
      dir + "/daemon.log");
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  absl::StatusOr<std::string> server = daemon->GrpcAddress();
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<CommandResult> submitted =
      RunCommand({GPUPROBE_PATH, "--server", *server, "submit", "--probe", "command", "--param",
                  "command=hang"},
                 {}, dir);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  ASSERT_EQ(submitted->exit_code, 0) << submitted->err;
  const pid_t pid = AwaitPid(dir + "/hang.pid");
  ASSERT_NE(pid, 0) << "the command never started";
  absl::StatusOr<int> code = daemon->StopWith(SIGTERM, absl::Seconds(60));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0) << daemon->Log();
  EXPECT_TRUE(Ends(pid)) << "the command's process " << pid << " outlived its daemon";
}

}  // namespace
}  // namespace gpuprobe
