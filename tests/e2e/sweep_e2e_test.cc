// End to end: gpuprobed on port 0 (cpu backend) and the gpuprobe CLI as real processes.
#include "absl/strings/str_format.h"
#include "tests/e2e/sweep_e2e_fixture.h"

namespace gpuprobe {
namespace {

TEST_F(SweepEndToEndTest, TsvSweepPrintsTheSeedsTable) {
  const CommandResult r = Cli({"--format", "tsv", "sweep", "--experts", "64", "--hidden", "512",
                               "--ff", "128", "--selected", "4", "--t", "3", "--reps", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Tsv tsv = ParseTsv(r.out);
  EXPECT_THAT(tsv.comments,
              testing::Contains("# geometry experts=64 hidden=512 ff=128 selected=4 t=3 reps=3"));
  EXPECT_THAT(
      tsv.comments,
      testing::Contains(HasSubstr("# per-expert bytes gate+up=73728 (0.070 MiB) down=36864")));
  EXPECT_THAT(tsv.comments, testing::Contains(HasSubstr("cpu (reference kernels)")));
  EXPECT_EQ(tsv.header, (std::vector<std::string>{
                            "t", "slots", "union", "gu_us", "down_us", "section_us", "gu_spread",
                            "dn_spread", "gu_BW_vs_union", "gu_BW_vs_slots", "vs_t3_full"}));
  const std::vector<std::vector<std::string>> arms = {{"1", "4", "4"},  {"2", "8", "4"},
                                                      {"2", "8", "8"},  {"3", "12", "4"},
                                                      {"3", "12", "8"}, {"3", "12", "12"}};
  ASSERT_EQ(tsv.rows.size(), arms.size());
  for (size_t i = 0; i < arms.size(); ++i) {
    const std::vector<std::string>& row = tsv.rows[i];
    ASSERT_EQ(row.size(), 11u) << "row " << i;
    EXPECT_EQ(std::vector<std::string>(row.begin(), row.begin() + 3), arms[i]);
    for (int c = 3; c < 10; ++c) {
      double v = 0;
      EXPECT_TRUE(absl::SimpleAtod(row[c], &v)) << row[c];
      EXPECT_GE(v, 0.0);
    }
    double gu = 0, down = 0, section = 0;
    ASSERT_TRUE(absl::SimpleAtod(row[3], &gu) && absl::SimpleAtod(row[4], &down) &&
                absl::SimpleAtod(row[5], &section));
    EXPECT_GT(gu, 0.0);
    EXPECT_NEAR(section, gu + down, 0.11);  // each printed to 0.1 us
    EXPECT_TRUE(absl::EndsWith(row[10], "x")) << row[10];
  }
  EXPECT_EQ(tsv.rows.back()[10], "1.0000x");
}

TEST_F(SweepEndToEndTest, HiddenNotMultipleOf16IsRefusedNamingTheField) {
  const CommandResult r = Cli({"sweep", "--experts", "64", "--hidden", "500", "--ff", "128",
                               "--selected", "4", "--t", "3", "--reps", "3"});
  EXPECT_EQ(r.exit_code, 2);  // the daemon found it: a bad request all the same
  EXPECT_THAT(r.err, HasSubstr("hidden"));
  EXPECT_THAT(r.err, HasSubstr("500"));
  EXPECT_EQ(r.out, "");
}

TEST_F(SweepEndToEndTest, SeedEnvironmentVariablesAreDefaults) {
  const CommandResult r = Cli({"--format", "tsv", "sweep", "--reps", "2"},
                              {"MEMRA_MOEU_EXPERTS=32", "MEMRA_MOEU_HIDDEN=256", "MEMRA_MOEU_FF=64",
                               "MEMRA_MOEU_SELECTED=2", "MEMRA_MOEU_T=2", "MEMRA_MOEU_REPS=50"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Tsv tsv = ParseTsv(r.out);
  EXPECT_THAT(tsv.comments,
              testing::Contains("# geometry experts=32 hidden=256 ff=64 selected=2 t=2 reps=2"));
  EXPECT_EQ(tsv.header.back(), "vs_t2_full");
  EXPECT_EQ(tsv.rows.size(), 3u);
}

TEST_F(SweepEndToEndTest, JsonAndCsvCarryOneRecordPerArm) {
  const std::vector<std::string> sweep = {
      "sweep", "--experts",  "32",  "--hidden", "256", "--ff",    "64",    "--selected",
      "2",     "--t-values", "1,2", "--reps",   "2",   "--label", "ci=yes"};
  std::vector<std::string> args = {"--format", "json"};
  args.insert(args.end(), sweep.begin(), sweep.end());
  const CommandResult json = Cli(args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const std::vector<std::string> lines = absl::StrSplit(json.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  // The job is named on stderr, for people, and in every row, for scripts.
  const std::string job = JobNamedIn(json.err);
  ASSERT_FALSE(job.empty()) << json.err;
  for (const std::string& line : lines) {
    v1::Result result;
    ASSERT_TRUE(ApiJsonToMessage(line, &result).ok()) << line;
    EXPECT_EQ(result.job_id(), job);
    EXPECT_EQ(result.device(), "cpu (reference kernels)");
    EXPECT_EQ(result.metrics(0).name(), "gu_us");
    EXPECT_GT(result.metrics(0).median(), 0.0);
  }
  args[1] = "csv";
  const CommandResult csv = Cli(args);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const std::string csv_job = JobNamedIn(csv.err);
  const std::vector<std::string> rows = absl::StrSplit(csv.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_TRUE(absl::StartsWith(
      rows[0],
      "job_id,probe,labels,experts,hidden,ff,selected,seed,reps,blocks,order,timing,cache,"
      "device,attempt,arm_index,variant,t,slots,union_size,gu_us,"))
      << rows[0];
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_TRUE(absl::StartsWith(rows[i], csv_job + ",moe-union,ci=yes,32,256,64,2,1,2,1,fixed,"))
        << rows[i];
    EXPECT_EQ(CsvFieldCount(rows[i]), CsvFieldCount(rows[0])) << rows[i];
  }
  // Absent values are empty: the cpu backend has no calibrated read to take a share of; the
  // sweep has a reference row (t = 2, union = slots), so every row has its ratio, in full.
  const std::vector<std::string> header = absl::StrSplit(rows[0], ',');
  const std::vector<std::string> first = absl::StrSplit(rows[1], ',');
  ASSERT_EQ(header.size(), first.size()) << rows[1];
  auto cell = [&](const std::string& name) {
    const auto at = std::find(header.begin(), header.end(), name);
    return at == header.end() ? std::string("(no column)") : first[at - header.begin()];
  };
  EXPECT_EQ(cell("gu_pct_of_read_bw"), "");
  EXPECT_EQ(cell("verdict"), "too-few-reps");
  double ratio = 0;
  EXPECT_TRUE(absl::SimpleAtod(cell("vs_reference"), &ratio)) << cell("vs_reference");
  EXPECT_GT(ratio, 0.0);
}

TEST_F(SweepEndToEndTest, TheCommandLineKeepsTheConventions) {
  // Help per command, and `help COMMAND` alike; the version names the commit.
  const CommandResult help = Cli({"help", "wait"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_THAT(help.out, HasSubstr("--timeout"));
  EXPECT_THAT(help.out, Not(HasSubstr("--experts")));
  EXPECT_EQ(Cli({"wait", "--help"}).out, help.out);
  EXPECT_THAT(help.out, HasSubstr("Usage: gpuprobe wait"));
  // `help` alone is the program's help: every command listed.
  const CommandResult commands = Cli({"help"});
  EXPECT_EQ(commands.exit_code, 0) << commands.err;
  EXPECT_THAT(commands.out, HasSubstr("Usage: gpuprobe"));
  EXPECT_THAT(commands.out,
              testing::AllOf(HasSubstr("sweep"), HasSubstr("compare"), HasSubstr("probes")));
  const CommandResult version = Cli({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.out,
              testing::MatchesRegex("gpuprobe [0-9.]+ \\(commit [0-9a-f]+(-dirty)?\\)\n"));
  // A flag of another command is refused, saying whose it is; misspellings get their nearest.
  const CommandResult foreign = Cli({"jobs", "--experts", "64"});
  EXPECT_EQ(foreign.exit_code, 2);
  EXPECT_THAT(foreign.err,
              HasSubstr("--experts is not a flag of jobs; it belongs to sweep, check, submit"));
  const CommandResult flag = Cli({"sweep", "--expert", "64"});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_THAT(flag.err, HasSubstr("unknown flag --expert; did you mean --experts?"));
  const CommandResult command = Cli({"swep"});
  EXPECT_EQ(command.exit_code, 2);
  EXPECT_THAT(command.err, HasSubstr("unknown command \"swep\"; did you mean sweep?"));
  const CommandResult two = Cli({"show", "job-1", "job-2"});
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_THAT(two.err, HasSubstr("JOB: At Most 1 required but received 2"));
  // Flags spelt with underscores, as the client took them before, are the dashed flags.
  const CommandResult underscored = Cli({"sweep", "--t_values", "0"});
  EXPECT_EQ(underscored.exit_code, 2);
  EXPECT_THAT(underscored.err, HasSubstr("t_values: 0 is outside [1, 128]"));  // the value arrived
  // Global flags go after the command as well as before it.
  const CommandResult after = Cli({"info", "--format", "json"});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_TRUE(absl::StartsWith(after.out, "{")) << after.out;
  // The daemon's own --help lists its flags.
  absl::StatusOr<CommandResult> daemon_help = RunCommand({GPUPROBED_PATH, "--help"}, {}, *dir_);
  ASSERT_TRUE(daemon_help.ok());
  EXPECT_THAT(daemon_help->out + daemon_help->err, HasSubstr("--max_queued_jobs"));
  EXPECT_THAT(daemon_help->out + daemon_help->err, Not(HasSubstr("No flags matched")));
  // Under the flags' file as the repository names it, not the path it was built at.
  EXPECT_THAT(daemon_help->out + daemon_help->err,
              HasSubstr("Flags from server/options/daemon_options.cc:"));
  // A page directory the operator names must hold the page, checked before the daemon starts.
  absl::StatusOr<CommandResult> no_page =
      RunCommand({GPUPROBED_PATH, "--backend", "cpu", "--listen", "127.0.0.1:0", "--http",
                  "127.0.0.1:0", "--data-dir", *dir_ + "/no-page", "--web-root", *dir_ + "/none"},
                 {}, *dir_);
  ASSERT_TRUE(no_page.ok());
  EXPECT_EQ(no_page->exit_code, 2);
  EXPECT_THAT(no_page->err, HasSubstr("--web-root: the dashboard page: cannot read " + *dir_ +
                                      "/none/index.html"));
  EXPECT_THAT(no_page->err, Not(HasSubstr("device worker")));
}

TEST_F(SweepEndToEndTest, BadFlagValuesAreUsageErrors) {
  CommandResult r = Cli({"sweep", "--timing", "fast"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--timing"));
  r = Cli({"--format", "xml", "sweep"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--format"));
  r = Cli({"sweep"}, {"MEMRA_MOEU_HIDDEN=abc"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("MEMRA_MOEU_HIDDEN"));
}

TEST_F(SweepEndToEndTest, UnreachableServerIsReportedWithItsOwnExitCode) {
  absl::StatusOr<CommandResult> r =
      RunCommand({GPUPROBE_PATH, "--server", "127.0.0.1:1", "sweep", "--reps", "2"}, {}, *dir_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 4);
  EXPECT_THAT(r->err, HasSubstr("cannot reach gpuprobed at 127.0.0.1:1"));
}

TEST_F(SweepEndToEndTest, AServerAddressThatIsNotHostAndPortIsRefusedNamingItsSource) {
  for (const std::string bad : {"127.0.0.1:103639", "127.0.0.1:38103abc", "127.0.0.1:-1",
                                "127.0.0.1:0", "127.0.0.1", "[::1]:x"}) {
    absl::StatusOr<CommandResult> r =
        RunCommand({GPUPROBE_PATH, "--server", bad, "jobs"}, {}, *dir_);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->exit_code, 2) << bad;
    EXPECT_THAT(r->err, HasSubstr("--server: \"" + bad +
                                  "\" is not HOST:PORT with a port in "
                                  "1..65535"));
  }
  absl::StatusOr<CommandResult> env =
      RunCommand({GPUPROBE_PATH, "jobs"}, {"GPUPROBE_SERVER=h:65536"}, *dir_);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->exit_code, 2);
  EXPECT_THAT(env->err, HasSubstr("GPUPROBE_SERVER: \"h:65536\""));
  // Bracketed IPv6 is an address (nothing listens there: unreachable, not a usage error).
  absl::StatusOr<CommandResult> v6 =
      RunCommand({GPUPROBE_PATH, "--server", "[::1]:1", "jobs"}, {}, *dir_);
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->exit_code, 4) << v6->err;
}

TEST_F(SweepEndToEndTest, CheckPassesAndItsDumpVerifiesOfflineWithNumpy) {
  const std::string dump = *dir_ + "/dump";
  const CommandResult check = Cli({"check", "--experts", "32", "--hidden", "256", "--ff", "64",
                                   "--selected", "4", "--t", "3", "--dump", dump});
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_THAT(check.out, HasSubstr("cpu (reference kernels)"));
  EXPECT_THAT(check.out, HasSubstr("all 6 kernel checks passed"));  // 3 unions x 2 kernels
  // Debian's interpreter, which has python3-numpy (deploy/install-deps.sh).
  absl::StatusOr<CommandResult> verify =
      RunCommand({"/usr/bin/python3", VERIFY_DUMP_PATH, dump}, {}, *dir_);
  ASSERT_TRUE(verify.ok()) << verify.status();
  EXPECT_EQ(verify->exit_code, 0) << verify->out << verify->err;
  EXPECT_THAT(verify->out, HasSubstr("3 arms"));
}

TEST_F(SweepEndToEndTest, CheckDumpNeverWritesThroughALinkAndNeedsADirectory) {
  const std::vector<std::string> check = {"check", "--experts",  "32", "--hidden", "256", "--ff",
                                          "64",    "--selected", "4",  "--t",      "2",   "--dump"};
  std::vector<std::string> args = check;
  args.push_back(*dir_ + "/first");
  ASSERT_EQ(Cli(args).exit_code, 0);
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(*dir_ + "/first")) {
    names.push_back(entry.path().filename().string());
  }
  ASSERT_FALSE(names.empty());
  // Another dump directory where someone planted a link at an artifact's name.
  const std::string planted = *dir_ + "/planted", victim = *dir_ + "/victim";
  std::filesystem::create_directory(planted);
  std::ofstream(victim) << "keep me";
  std::filesystem::create_symlink(victim, planted + "/" + names[0]);
  args = check;
  args.push_back(planted);
  const CommandResult refused = Cli(args);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr(planted + "/" + names[0] + " is a symbolic link"));
  std::ifstream in(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "keep me");
  // A file where the directory should be: refused before any job is submitted.
  const std::string jobs_before = Cli({"--format", "tsv", "jobs"}).out;
  args = check;
  args.push_back(victim);
  const CommandResult not_a_dir = Cli(args);
  EXPECT_EQ(not_a_dir.exit_code, 2);
  EXPECT_THAT(not_a_dir.err, HasSubstr("--dump: " + victim + " is not a directory"));
  EXPECT_EQ(Cli({"--format", "tsv", "jobs"}).out, jobs_before);
}

TEST_F(SweepEndToEndTest, CheckOfAVariantTheBackendLacksIsRefused) {
  const CommandResult r = Cli({"check", "--variant", "union", "--experts", "32", "--hidden", "256",
                               "--ff", "64", "--selected", "4", "--t", "2"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("variant"));
}

TEST_F(SweepEndToEndTest, SmallMisusesAreRefusedNamingWhatIsWrong) {
  const std::string job = SucceededJob();
  ASSERT_FALSE(job.empty());
  // wait: a timeout that is not positive is a usage error; an ended job ends the wait whatever
  // the timeout.
  for (const std::string timeout : {"0s", "-5s"}) {
    const CommandResult r = Cli({"wait", job, "--timeout", timeout});
    EXPECT_EQ(r.exit_code, 2) << timeout << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("--timeout: ")) << timeout;
  }
  EXPECT_EQ(Cli({"wait", job, "--timeout", "1ns"}).exit_code, 0);
  // A label filter takes key=value, as a label does.
  const CommandResult novalue = Cli({"jobs", "--label", "novalue"});
  EXPECT_EQ(novalue.exit_code, 2);
  EXPECT_THAT(novalue.err, HasSubstr("--label"));
  // Label keys that filters could not name, and line breaks that would split a table.
  for (const std::string label : {"a\nb=1", "k=v\nw"}) {
    const CommandResult r = Cli({"submit", "--reps", "2", "--label", label});
    EXPECT_EQ(r.exit_code, 2) << label;  // a bad request, found by the daemon
    EXPECT_THAT(r.err, HasSubstr("labels: key")) << label;
  }
  // A host no daemon of the fleet has: refused, naming the hosts it has, nothing queued for ever.
  const CommandResult nowhere = Cli({"submit", "--reps", "2", "--host", "no-such-host"});
  EXPECT_NE(nowhere.exit_code, 0);
  EXPECT_THAT(nowhere.err, HasSubstr("host: no daemon of this fleet is on host \"no-such-host\""));
  EXPECT_EQ(Cli({"--format", "tsv", "jobs", "--state", "queued"}).out.find("no-such-host"),
            std::string::npos);
  // A key where the CA should be.
  const std::string key = *dir_ + "/key.pem";
  std::ofstream(key) << "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";
  const CommandResult not_a_ca = Cli({"--tls-ca", key, "info"});
  EXPECT_EQ(not_a_ca.exit_code, 2);
  EXPECT_THAT(not_a_ca.err, HasSubstr("--tls-ca: " + key + " holds no PEM certificate"));
  const CommandResult itself = Cli({"compare", job, job});
  EXPECT_EQ(itself.exit_code, 2);
  EXPECT_THAT(itself.err, HasSubstr("the candidate is the base job itself"));
}

// Jobs of 3 or more blocks keep each block's section, and compare judges two such jobs by their
// blocks (Welch's interval between placements); with a job of 1 block it falls back to the reps.
TEST_F(SweepEndToEndTest, CompareJudgesJobsOfThreeOrMoreBlocksByTheirBlocks) {
  const auto submit = [](const std::string& blocks) {
    std::vector<std::string> args = {"submit", "--wait", "--blocks", blocks};
    args.insert(args.end(), kSmallSweep.begin(), kSmallSweep.end());
    args.back() = "12";  // --reps: 11 kept reps a block, enough for the reps' bootstrap too
    const CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
    return lines.empty() ? std::string() : lines.back();
  };
  const std::string base = submit("3"), cand = submit("4"), single = submit("1");
  ASSERT_FALSE(base.empty() || cand.empty() || single.empty());

  const CommandResult shown = Cli({"--format", "json", "show", cand});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const std::vector<std::string> lines = absl::StrSplit(shown.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u + 3);
  for (size_t i = 1; i < lines.size(); ++i) {
    v1::Result result;
    ASSERT_TRUE(ApiJsonToMessage(lines[i], &result).ok()) << lines[i];
    EXPECT_EQ(result.block_section_us_size(), 4);
    EXPECT_EQ(result.metrics(0).kept(), 4u * 11);
  }

  const CommandResult by_blocks = Cli({"--format", "json", "compare", base, cand});
  ASSERT_EQ(by_blocks.exit_code == 0 || by_blocks.exit_code == 6, true) << by_blocks.err;
  v1::CompareJobsResponse r;
  ASSERT_TRUE(ApiJsonToMessage(std::string(absl::StripAsciiWhitespace(by_blocks.out)), &r).ok())
      << by_blocks.out;
  EXPECT_EQ(r.method(), "blocks");
  ASSERT_EQ(r.arms_size(), 3);
  for (const v1::ArmComparison& arm : r.arms()) {
    EXPECT_LT(arm.ratio_low(), arm.ratio());
    EXPECT_GT(arm.ratio_high(), arm.ratio());
    EXPECT_NEAR(arm.ratio(), arm.candidate_section_us() / arm.base_section_us(), 1e-9);
  }
  // csv: the same comparison under the same names, numbers in full.
  const CommandResult csv = Cli({"--format", "csv", "compare", base, cand});
  const std::vector<std::string> csv_lines = absl::StrSplit(csv.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(csv_lines.size(), 1u + 3) << csv.out;
  EXPECT_EQ(csv_lines[0],
            "variant,t,slots,union,base_section_us,candidate_section_us,ratio,ratio_low,"
            "ratio_high,verdict");
  const std::vector<std::string> cells = absl::StrSplit(csv_lines[1], ',');
  ASSERT_EQ(cells.size(), 10u);
  double ratio = 0;
  ASSERT_TRUE(absl::SimpleAtod(cells[6], &ratio)) << csv_lines[1];
  EXPECT_EQ(ratio, r.arms(0).ratio()) << "the ratio is written in full";
  EXPECT_THAT(cells[9], testing::AnyOf("same", "faster", "slower", "unsure")) << csv_lines[1];

  // markdown: a pull-request comment, one table row per arm, the verdict in bold, the tally.
  const CommandResult markdown = Cli({"--format", "markdown", "compare", base, cand});
  ASSERT_TRUE(markdown.exit_code == 0 || markdown.exit_code == 6) << markdown.err;
  EXPECT_THAT(markdown.out, HasSubstr(absl::StrCat("### gpuprobe compare ", base, " (base) -> ",
                                                   cand, " (candidate)")));
  EXPECT_THAT(markdown.out,
              HasSubstr("| variant | t | slots | union | base section_us | candidate section_us "
                        "| ratio [95%] | verdict |"));
  EXPECT_THAT(markdown.out, HasSubstr(absl::StrFormat("[%.4f, %.4f] | **", r.arms(0).ratio_low(),
                                                      r.arms(0).ratio_high())));
  EXPECT_THAT(markdown.out, HasSubstr(absl::StrFormat("%d slower", r.slower())));

  const CommandResult by_reps = Cli({"--format", "json", "compare", base, single});
  ASSERT_TRUE(ApiJsonToMessage(std::string(absl::StripAsciiWhitespace(by_reps.out)), &r).ok())
      << by_reps.out;
  EXPECT_EQ(r.method(), "one job");
}

TEST_F(SweepEndToEndTest, JsonAndCsvOutputsOfJobsAndShowAreOneParseableStream) {
  const std::string job = SucceededJob();
  ASSERT_FALSE(job.empty());

  const CommandResult jobs = Cli({"--format", "json", "jobs"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  int listed = 0;
  for (absl::string_view line : absl::StrSplit(jobs.out, '\n', absl::SkipEmpty())) {
    v1::Job parsed;
    ASSERT_TRUE(ApiJsonToMessage(std::string(line), &parsed).ok()) << line;
    EXPECT_FALSE(parsed.id().empty());
    ++listed;
  }
  EXPECT_GT(listed, 0);

  const CommandResult csv = Cli({"--format", "csv", "jobs"});
  ASSERT_EQ(csv.exit_code, 0);
  EXPECT_TRUE(
      absl::StartsWith(csv.out, "job_id,state,submitted,results,attempts,labels,host,probe\n"));

  const CommandResult shown = Cli({"--format", "json", "show", job});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const std::vector<std::string> shown_lines = absl::StrSplit(shown.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(shown_lines.size(), 1u + 3);  // the record, then 3 rows
  google::protobuf::Struct record;
  ASSERT_TRUE(ApiJsonToMessage(shown_lines[0], &record).ok());
  EXPECT_EQ(record.fields().at("job").struct_value().fields().at("id").string_value(), job);
  for (size_t i = 1; i < shown_lines.size(); ++i) {
    v1::Result result;
    EXPECT_TRUE(ApiJsonToMessage(shown_lines[i], &result).ok());
    EXPECT_EQ(result.attempt(), 1u);
  }

  const CommandResult shown_csv = Cli({"--format", "csv", "show", job});
  ASSERT_EQ(shown_csv.exit_code, 0) << shown_csv.err;
  const std::vector<std::string> csv_lines = absl::StrSplit(shown_csv.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(csv_lines.size(), 1u + 3);  // the header, then 3 rows: sweep's csv schema
  EXPECT_TRUE(absl::StartsWith(csv_lines[0], "job_id,probe,labels,experts,")) << csv_lines[0];
  EXPECT_THAT(csv_lines[0], HasSubstr(",variant,t,slots,union_size,gu_us,"));
  for (size_t i = 1; i < csv_lines.size(); ++i) {
    EXPECT_TRUE(absl::StartsWith(csv_lines[i], job + ",moe-union,")) << csv_lines[i];
    EXPECT_EQ(CsvFieldCount(csv_lines[i]), CsvFieldCount(csv_lines[0])) << csv_lines[i];
  }
  EXPECT_THAT(shown_csv.err, HasSubstr("job " + job + ": succeeded"));

  const CommandResult help = Cli({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--format"));
  EXPECT_THAT(help.out + help.err, testing::Not(HasSubstr("No flags matched")));
}

TEST_F(SweepEndToEndTest, SubmitWaitInfoAndCheckSpeakJsonAndCsvAndNameTheirJob) {
  const std::vector<std::string>& small = kSmallSweep;
  std::vector<std::string> args = {"--format", "json", "submit"};
  args.insert(args.end(), small.begin(), small.end());
  const CommandResult submitted = Cli(args);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  v1::Job job;
  ASSERT_TRUE(ApiJsonToMessage(submitted.out, &job).ok()) << submitted.out;
  EXPECT_THAT(submitted.err, HasSubstr("gpuprobe: job " + job.id() + " "));

  const CommandResult waited = Cli({"--format", "json", "wait", job.id()});
  ASSERT_EQ(waited.exit_code, 0) << waited.err;
  v1::Job ended;
  ASSERT_TRUE(ApiJsonToMessage(waited.out, &ended).ok()) << waited.out;
  EXPECT_EQ(ended.id(), job.id());
  EXPECT_EQ(ended.state(), v1::JOB_STATE_SUCCEEDED);

  args[1] = "csv";
  args.push_back("--wait");  // one record on stdout: the ended job's
  const CommandResult csv = Cli(args);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out, "job_id,state,error_message\n" + JobNamedIn(csv.err) + ",succeeded,\n");

  const CommandResult info = Cli({"--format", "json", "info"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  v1::ServerInfo server;
  ASSERT_TRUE(ApiJsonToMessage(info.out, &server).ok()) << info.out;
  EXPECT_EQ(server.backend(), "cpu");
  const CommandResult info_csv = Cli({"--format", "csv", "info"});
  EXPECT_EQ(info_csv.exit_code, 2);
  EXPECT_THAT(info_csv.err, HasSubstr("--format: info prints table or json"));

  // A check's lines say its job and its seed, so that each can be reproduced alone.
  std::vector<std::string> check = {"--format", "json", "check", "--seed", "7"};
  check.insert(check.end(), small.begin(), small.end() - 2);  // a check takes no --reps
  const CommandResult checked = Cli(check);
  ASSERT_EQ(checked.exit_code, 0) << checked.err;
  const std::string check_job = JobNamedIn(checked.err);
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(checked.out, '\n', absl::SkipEmpty())) {
    v1::KernelCheck c;
    ASSERT_TRUE(ApiJsonToMessage(std::string(line), &c).ok()) << line;
    EXPECT_EQ(c.job_id(), check_job);
    EXPECT_EQ(c.seed(), 7u);
    EXPECT_TRUE(c.passed());
    ++lines;
  }
  EXPECT_GT(lines, 0);
  check[1] = "csv";
  const CommandResult check_csv = Cli(check);
  ASSERT_EQ(check_csv.exit_code, 0) << check_csv.err;
  const std::vector<std::string> rows = absl::StrSplit(check_csv.out, '\n', absl::SkipEmpty());
  ASSERT_GT(rows.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(rows[0], "job_id,probe,labels,experts,hidden,ff,selected,seed,"))
      << rows[0];
  EXPECT_TRUE(absl::StartsWith(rows[1], JobNamedIn(check_csv.err) + ",moe-union,,32,256,64,4,7,"))
      << rows[1];
}

TEST_F(SweepEndToEndTest, CtrlCOnASweepCancelsItsJob) {
  // 10,000 reps of this geometry take minutes on the cpu backend: the interrupt, sent as soon
  // as the client names the job, finds it queued or running.
  absl::StatusOr<ChildProcess> sweep = ChildProcess::Start(
      {GPUPROBE_PATH, "--server", *server_, "sweep", "--experts", "64", "--hidden", "1024", "--ff",
       "256", "--selected", "4", "--t", "2", "--reps", "10000"},
      *dir_ + "/interrupted-sweep.log");
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  absl::StatusOr<std::string> job = sweep->AwaitLog("gpuprobe: job ", absl::Seconds(30));
  ASSERT_TRUE(job.ok()) << job.status() << sweep->Log();
  absl::StatusOr<int> code = sweep->StopWith(SIGINT, absl::Seconds(60));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 3) << sweep->Log();  // cancelled
  EXPECT_THAT(sweep->Log(), HasSubstr("interrupted: cancelling job " + *job));
  const CommandResult shown = Cli({"--format", "json", "show", *job});
  EXPECT_EQ(shown.exit_code, 3) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("\"state\":\"cancelled\""));
}

TEST_F(SweepEndToEndTest, SubmitWaitShowJobsAndCancel) {
  const CommandResult submitted =
      Cli({"submit", "--experts", "32", "--hidden", "256", "--ff", "64", "--selected", "4", "--t",
           "2", "--reps", "3", "--label", "suite=e2e", "--idempotency-key", "e2e-1"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const std::vector<std::string> lines = absl::StrSplit(submitted.out, '\n', absl::SkipEmpty());
  ASSERT_FALSE(lines.empty());
  const std::string job = lines.back();
  EXPECT_EQ(Cli({"wait", job, "--timeout", "60s"}).exit_code, 0);
  const CommandResult again =
      Cli({"submit", "--experts", "32", "--hidden", "256", "--ff", "64", "--selected", "4", "--t",
           "2", "--reps", "3", "--idempotency-key", "e2e-1"});
  EXPECT_EQ(absl::StripSuffix(again.out, "\n"), job);  // the same job, not a new one

  const CommandResult shown = Cli({"--format", "tsv", "show", job});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const Tsv tsv = ParseTsv(shown.out);
  EXPECT_EQ(tsv.rows.size(), 3u);  // t = 1: 1 arm, t = 2: 2 arms
  EXPECT_EQ(tsv.header.back(), "vs_t2_full");

  const CommandResult jobs = Cli({"jobs", "--label", "suite=e2e"});
  EXPECT_THAT(jobs.out, HasSubstr(job));
  EXPECT_THAT(jobs.out, HasSubstr("succeeded"));

  const CommandResult long_job = Cli({"submit", "--experts", "32", "--hidden", "256", "--ff", "64",
                                      "--selected", "4", "--t", "2", "--reps", "10000"});
  const std::string long_id =
      std::vector<std::string>(absl::StrSplit(long_job.out, '\n', absl::SkipEmpty())).back();
  EXPECT_EQ(Cli({"wait", long_id, "--timeout", "200ms"}).exit_code, 5);
  EXPECT_EQ(Cli({"cancel", long_id}).exit_code, 0);
  EXPECT_EQ(Cli({"wait", long_id, "--timeout", "60s"}).exit_code, 3);
  EXPECT_EQ(Cli({"wait", "job-999999"}).exit_code, 1);
}

}  // namespace
}  // namespace gpuprobe
