// The dashboard page against a real daemon, in headless Chromium: a job's rows and plot, an
// exactness job, trends across jobs and a comparison.
#include "tests/e2e/chromium.h"
#include "tests/e2e/sweep_e2e_fixture.h"

namespace gpuprobe {
namespace {

using testing_support::Chromium;

TEST_F(SweepEndToEndTest, DashboardShowsAJobsRowsAndOnePlottedSeriesPerT) {
  const CommandResult sweep =
      Cli({"submit", "--wait", "--experts", "32", "--hidden", "256", "--ff", "64", "--selected",
           "4", "--t", "3", "--reps", "3", "--label", "page=test"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const std::string job =
      std::vector<std::string>(absl::StrSplit(sweep.out, '\n', absl::SkipEmpty())).back();
  const std::string url = "http://" + *http_ + "/#/jobs/" + job;
  const CommandResult dom = Chromium(*dir_, {"--dump-dom"}, url);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  auto count = [&](const std::string& needle) {
    int n = 0;
    for (size_t at = dom.out.find(needle); at != std::string::npos;
         at = dom.out.find(needle, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("<tr class=\"row"), 6) << dom.out;  // one per arm: 1 + 2 + 3
  // The section plot: one series per t, the reference row circled.
  const std::string plot = dom.out.substr(dom.out.find("id=\"plot-section\""));
  EXPECT_THAT(plot, HasSubstr("data-series=\"t=1\""));
  EXPECT_THAT(plot, HasSubstr("data-series=\"t=2\""));
  EXPECT_THAT(plot, HasSubstr("data-series=\"t=3\""));
  EXPECT_EQ(count("class=\"series\""), 3);
  EXPECT_EQ(count("class=\"reference\""), 1);
  EXPECT_THAT(dom.out, HasSubstr("page=test"));
  EXPECT_THAT(dom.out, HasSubstr("telemetry: none: the cpu backend has no device telemetry"));
  EXPECT_THAT(dom.out, HasSubstr("<th class=\"text\">verdict</th>"));
  // The default columns fit a laptop's width; the others are a tick away.
  EXPECT_THAT(dom.out, HasSubstr("<details id=\"columns\">"));
  EXPECT_THAT(dom.out, Not(HasSubstr("<th>gu_BW_vs_union</th>")));
  EXPECT_THAT(dom.out, HasSubstr("data-column=\"gu_bw_vs_union\">"));
  // The y axis ticks at 0 and equal round steps: 1, 2, 2.5 or 5 times a power of ten.
  std::vector<double> ticks;
  static const std::regex kTick("<text class=\"tick\"[^>]*>([0-9.e+-]+)</text>");
  const std::string section = plot.substr(0, plot.find("</svg>"));
  for (std::sregex_iterator it(section.begin(), section.end(), kTick), end; it != end; ++it) {
    ticks.push_back(std::stod((*it)[1]));
  }
  ASSERT_GE(ticks.size(), 3u) << section;
  EXPECT_EQ(ticks[0], 0.0);
  const double step = ticks[1];
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
  EXPECT_THAT(mantissa, ::testing::AnyOf(DoubleNear(1, 1e-9), DoubleNear(2, 1e-9),
                                         DoubleNear(2.5, 1e-9), DoubleNear(5, 1e-9)))
      << step;
  for (size_t i = 1; i < ticks.size(); ++i) {
    EXPECT_NEAR(ticks[i], static_cast<double>(i) * step, step * 1e-9) << section;
  }
  // Kept for people to look at: the build tree's tests folder.
  const CommandResult shot = Chromium(*dir_, {"--screenshot=" + std::string(SCREENSHOT_PATH)}, url);
  EXPECT_EQ(shot.exit_code, 0) << shot.err;
}

// Two jobs labelled branch=main and one branch=feature: a series per branch, the baseline at
// the newest main job, one point per job with the job ids along the axis.
TEST_F(SweepEndToEndTest, DashboardShowsAnExactnessJobsChecksAndSaysAnUnknownPageIsNone) {
  const CommandResult check = Cli({"--format", "csv", "check", "--experts", "32", "--hidden", "256",
                                   "--ff", "64", "--selected", "4", "--t", "2", "--seed", "7"});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  const int checks =
      static_cast<int>(
          std::vector<std::string>(absl::StrSplit(check.out, '\n', absl::SkipEmpty())).size()) -
      1;
  ASSERT_GT(checks, 0);
  const CommandResult dom =
      Chromium(*dir_, {"--dump-dom"}, "http://" + *http_ + "/#/jobs/" + JobNamedIn(check.err));
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_THAT(dom.out,
              HasSubstr(absl::StrCat(checks, " of ", checks, " kernel checks passed · seed 7")))
      << dom.out;
  int rows = 0;
  for (size_t at = dom.out.find("<tr class=\"check pass\">"); at != std::string::npos;
       at = dom.out.find("<tr class=\"check pass\">", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, checks);
  EXPECT_THAT(dom.out, Not(HasSubstr("no rows yet")));

  const CommandResult unknown = Chromium(*dir_, {"--dump-dom"}, "http://" + *http_ + "/#/nosuch");
  ASSERT_EQ(unknown.exit_code, 0) << unknown.err;
  EXPECT_THAT(unknown.out, HasSubstr("No such page"));
  EXPECT_THAT(unknown.out, HasSubstr("#/nosuch is not a page of this dashboard"));
}

TEST_F(SweepEndToEndTest, DashboardTrendsAnArmAcrossJobs) {
  std::vector<std::string> jobs;
  for (const char* branch : {"main", "feature", "main", "main"}) {
    const CommandResult r = Cli({"submit", "--wait", "--experts", "32", "--hidden", "256", "--ff",
                                 "64", "--selected", "4", "--t", "2", "--reps", "12", "--label",
                                 absl::StrCat("trend=yes,branch=", branch)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    jobs.push_back(std::vector<std::string>(absl::StrSplit(r.out, '\n', absl::SkipEmpty())).back());
  }
  const std::string url =
      "http://" + *http_ + "/#/trends?key=branch&base=main&arm=per-slot,2,8&metric=gu";
  const CommandResult dom = Chromium(*dir_, {"--dump-dom"}, url);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_THAT(dom.out, HasSubstr("4 jobs with label branch")) << dom.out;
  const std::string plot = dom.out.substr(dom.out.find("id=\"plot-trend\""));
  EXPECT_THAT(plot, HasSubstr("class=\"series\" data-series=\"branch=main\""));
  EXPECT_THAT(plot, HasSubstr("class=\"series\" data-series=\"branch=feature\""));
  // Three main jobs: the baseline is their band, as compare's history interval.
  EXPECT_THAT(plot, HasSubstr("data-series=\"main band (3)\""));
  EXPECT_THAT(plot, HasSubstr("<rect class=\"band\""));
  EXPECT_THAT(plot, HasSubstr("hours since the first job"));
  EXPECT_THAT(dom.out, HasSubstr("the band of the newest 3 jobs with branch=main (compare's "
                                 "history interval), newest " +
                                 jobs[3]));
  EXPECT_THAT(plot, HasSubstr(">" + jobs[0] + "</text>"));  // the first tick
  // It says which spec it shows, and offers the others.
  EXPECT_THAT(dom.out, HasSubstr("<span id=\"trend-spec\">moe-union: experts=32 hidden=256 ff=64 "
                                 "selected=4 t_values=1,2 timing=events cache=warm "
                                 "variants=per-slot on cpu (reference kernels)</span>"));
  EXPECT_THAT(dom.out, HasSubstr("<select name=\"spec\">"));
  for (const std::string& job : jobs) EXPECT_THAT(plot, HasSubstr("<title>" + job + "</title>"));
  const CommandResult shot =
      Chromium(*dir_, {"--screenshot=" + std::string(TRENDS_SCREENSHOT_PATH)}, url);
  EXPECT_EQ(shot.exit_code, 0) << shot.err;
}

TEST_F(SweepEndToEndTest, DashboardComparesTwoJobsArmByArm) {
  const std::vector<std::string> submit = {
      "submit", "--wait",     "--experts", "32",  "--hidden", "256",    "--ff",
      "64",     "--selected", "4",         "--t", "2",        "--reps", "12"};
  std::vector<std::string> jobs;
  for (int i = 0; i < 2; ++i) {
    const CommandResult r = Cli(submit);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    jobs.push_back(std::vector<std::string>(absl::StrSplit(r.out, '\n', absl::SkipEmpty())).back());
  }
  const std::string url = "http://" + *http_ + "/#/compare/" + jobs[0] + "/" + jobs[1];
  const CommandResult dom = Chromium(*dir_, {"--dump-dom"}, url);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  int arms = 0;
  for (size_t at = dom.out.find("<tr class=\"arm"); at != std::string::npos;
       at = dom.out.find("<tr class=\"arm", at + 1)) {
    ++arms;
  }
  EXPECT_EQ(arms, 3) << dom.out;  // t=1 union 4; t=2 unions 4 and 8
  EXPECT_THAT(dom.out, HasSubstr("Compare <a href=\"#/jobs/" + jobs[0]));
  EXPECT_THAT(dom.out, HasSubstr("id=\"compare-summary\""));
  // The ratio plot: each arm's ratio and interval against the threshold's band.
  const std::string plot = dom.out.substr(dom.out.find("id=\"plot-compare\""));
  EXPECT_THAT(plot, HasSubstr("data-series=\"same: 1 ± 2.0%\""));
  EXPECT_THAT(plot, HasSubstr("<rect class=\"band\""));
  EXPECT_THAT(plot, HasSubstr(">per-slot t=2 slots=8 union=8</text>"));
  const CommandResult shot =
      Chromium(*dir_, {"--screenshot=" + std::string(COMPARE_SCREENSHOT_PATH)}, url);
  EXPECT_EQ(shot.exit_code, 0) << shot.err;
}

}  // namespace
}  // namespace gpuprobe
