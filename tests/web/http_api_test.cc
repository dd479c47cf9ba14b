// The HTTP side against an in-process daemon on the cpu backend: every endpoint's JSON shape,
// the filters, 400 and 404, tokens, and the Prometheus text format.
#include "server/web/http_api.h"

#include <httplib.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "common/api_json.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "server/device/cpu_backend.h"
#include "server/store/sqlite_job_store.h"
#include "tests/temp_dir.h"
#include "tests/web/raw_connection.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;
using testing::Not;

class HttpApiTest : public testing::Test {
 protected:
  testing_support::ScopedTempDir temp_{"gpuprobe_http"};  // removed last

  void Start(AccessControl access = {},
             absl::StatusOr<std::vector<WebAsset>> page = LoadWebAssets(DefaultWebRoot())) {
    data_dir_ = temp_.path();
    absl::StatusOr<std::unique_ptr<JobStore>> store =
        SqliteJobStore::Open(data_dir_ + "/gpuprobe.sqlite");
    ASSERT_TRUE(store.ok());
    auto probes = std::make_shared<const ProbeRegistry>(ProbeRegistry::Builtin({}).value());
    std::vector<std::unique_ptr<DeviceExecutor>> executors;
    executors.push_back(std::make_unique<InProcessExecutor>(std::make_unique<CpuBackend>()));
    absl::StatusOr<std::unique_ptr<JobManager>> manager =
        JobManager::Start(*std::move(store), std::move(executors), QueueLimits{}, probes,
                          std::make_unique<ArtifactStore>(data_dir_ + "/artifacts", 1 << 20));
    ASSERT_TRUE(manager.ok());
    manager_ = *std::move(manager);
    http_ = std::make_unique<HttpApi>(*manager_, access, "test", std::move(page));
    absl::StatusOr<int> port = http_->Start("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.status();
    port_ = *port;
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
  }

  void TearDown() override {
    if (http_) http_->Stop();
    if (manager_) manager_->Stop();
  }

  // A finished three-arm sweep labelled team=perf.
  std::string FinishedJob() {
    v1::SubmitRequest request;
    v1::SweepRequest* sweep = request.mutable_sweep();
    sweep->mutable_geometry()->set_experts(32);
    sweep->mutable_geometry()->set_hidden(256);
    sweep->mutable_geometry()->set_ff(64);
    sweep->mutable_geometry()->set_selected(4);
    sweep->set_t_max(2);
    sweep->set_reps(2);
    (*sweep->mutable_labels())["team"] = "perf";
    absl::StatusOr<v1::Job> job = manager_->Submit(request, "test");
    EXPECT_TRUE(job.ok()) << job.status();
    for (int i = 0; i < 500 && manager_->Get(job->id())->state() != v1::JOB_STATE_SUCCEEDED; ++i) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    return job->id();
  }

  template <typename Message>
  Message Json(const std::string& path, int want_status = 200) {
    httplib::Result res = client_->Get(path);
    EXPECT_TRUE(res) << path;
    Message message;
    if (!res) return message;
    EXPECT_EQ(res->status, want_status) << path << " " << res->body;
    EXPECT_TRUE(ApiJsonToMessage(res->body, &message).ok()) << res->body;
    return message;
  }

  // Each path answers 400 with a body holding `says`.
  void ExpectBadRequests(std::initializer_list<const char*> paths, const std::string& says) {
    for (const char* path : paths) {
      httplib::Result res = client_->Get(path);
      ASSERT_TRUE(res) << path;
      EXPECT_EQ(res->status, 400) << path;
      EXPECT_THAT(res->body, HasSubstr(says)) << path;
    }
  }

  std::unique_ptr<JobManager> manager_;
  std::unique_ptr<HttpApi> http_;
  std::unique_ptr<httplib::Client> client_;
  std::string data_dir_;
  int port_ = 0;
};

TEST_F(HttpApiTest, InfoJobsJobAndRowsAreTheProtosInJson) {
  Start();
  const std::string id = FinishedJob();
  const v1::ServerInfo info = Json<v1::ServerInfo>("/api/v1/info");
  EXPECT_EQ(info.backend(), "cpu");
  ASSERT_EQ(info.devices_size(), 1);
  EXPECT_EQ(info.store(), "sqlite");
  ASSERT_EQ(info.fleet_size(), 1) << "a fleet of one: this daemon";
  EXPECT_EQ(info.fleet(0).host(), "localhost");
  EXPECT_EQ(info.fleet(0).state(), "serving");

  const v1::ListJobsResponse all = Json<v1::ListJobsResponse>("/api/v1/jobs");
  ASSERT_EQ(all.jobs_size(), 1);
  EXPECT_EQ(all.jobs(0).id(), id);

  const v1::Job job = Json<v1::Job>("/api/v1/jobs/" + id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.results(), 3u);
  // The names csv and the CLI use: short enum names, 64-bit integers as numbers.
  httplib::Result raw = client_->Get("/api/v1/jobs/" + id);
  ASSERT_TRUE(raw);
  EXPECT_THAT(raw->body, HasSubstr(R"("state":"succeeded")"));
  EXPECT_THAT(raw->body, HasSubstr(R"("seed":1,)"));

  httplib::Result rows = client_->Get("/api/v1/jobs/" + id + "/rows");
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->status, 200);
  google::protobuf::Struct body;
  ASSERT_TRUE(ApiJsonToMessage(rows->body, &body).ok());
  // A moe-union sweep's arms are Results, as every probe's.
  EXPECT_FALSE(body.fields().contains("rows"));
  ASSERT_EQ(body.fields().at("results").list_value().values_size(), 3);
  v1::Result result;
  std::string first;
  (void)google::protobuf::util::MessageToJsonString(
      body.fields().at("results").list_value().values(0), &first);
  ASSERT_TRUE(ApiJsonToMessage(first, &result).ok());
  EXPECT_EQ(result.metrics(0).name(), "gu_us");
  EXPECT_GT(result.metrics(0).median(), 0.0);
}

TEST_F(HttpApiTest, ProbesAreListedWithTheirDeclarations) {
  Start();
  const auto list = Json<v1::ListProbesResponse>("/api/v1/probes");
  std::vector<std::string> names;
  for (const v1::ProbeInfo& p : list.probes()) names.push_back(p.name());
  const ProbeRegistry registry = ProbeRegistry::Builtin({}).value();
  std::vector<std::string> served;  // the registry's, sorted by name
  for (const Probe* p : registry.All()) served.push_back(p->Name());
  EXPECT_EQ(names, served);
  const auto read = std::find(names.begin(), names.end(), "read-bandwidth");
  ASSERT_NE(read, names.end());
  EXPECT_EQ(list.probes(static_cast<int>(read - names.begin())).metrics(0).name(), "read_us");
}

TEST_F(HttpApiTest, FiltersApplyAndBadParametersAre400UnknownJobs404) {
  Start();
  FinishedJob();
  EXPECT_EQ(Json<v1::ListJobsResponse>("/api/v1/jobs?state=succeeded").jobs_size(), 1);
  EXPECT_EQ(Json<v1::ListJobsResponse>("/api/v1/jobs?state=queued").jobs_size(), 0);
  EXPECT_EQ(Json<v1::ListJobsResponse>("/api/v1/jobs?label=team=perf").jobs_size(), 1);
  EXPECT_EQ(Json<v1::ListJobsResponse>("/api/v1/jobs?label=team=infra").jobs_size(), 0);
  // Several labels, as --label takes them: a job must carry all of them.
  EXPECT_EQ(Json<v1::ListJobsResponse>("/api/v1/jobs?label=team=perf,host=a").jobs_size(), 0);
  EXPECT_EQ(Json<v1::ListJobsResponse>("/api/v1/jobs?label=team=perf&label=host=a").jobs_size(), 0);
  EXPECT_EQ(
      Json<v1::ListJobsResponse>("/api/v1/jobs?created_after=2000-01-01T00:00:00Z").jobs_size(), 1);
  EXPECT_EQ(
      Json<v1::ListJobsResponse>("/api/v1/jobs?created_before=2000-01-01T00:00:00Z").jobs_size(),
      0);
  ExpectBadRequests({"/api/v1/jobs?state=bogus", "/api/v1/jobs?created_after=yesterday",
                     "/api/v1/jobs?page_size=0", "/api/v1/jobs?label==x"},
                    "\"error\"");
  httplib::Result missing = client_->Get("/api/v1/jobs/job-999");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_THAT(missing->body, HasSubstr("job-999"));
}

TEST_F(HttpApiTest, ArtifactsAreListedAndServedByNameOnly) {
  Start();
  v1::SubmitRequest request;
  v1::CheckRequest* check = request.mutable_check();
  check->mutable_geometry()->set_experts(8);
  check->mutable_geometry()->set_hidden(64);
  check->mutable_geometry()->set_ff(32);
  check->mutable_geometry()->set_selected(2);
  check->set_t(1);
  check->add_variants(v1::KERNEL_VARIANT_PER_SLOT);
  check->set_dump(true);
  absl::StatusOr<v1::Job> job = manager_->Submit(request, "test");
  ASSERT_TRUE(job.ok()) << job.status();
  for (int i = 0; i < 500 && manager_->Get(job->id())->state() != v1::JOB_STATE_SUCCEEDED; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  const auto list = Json<v1::ListArtifactsResponse>("/api/v1/jobs/" + job->id() + "/artifacts");
  ASSERT_GT(list.artifacts_size(), 0);
  const v1::Artifact& first = list.artifacts(0);
  httplib::Result bytes = client_->Get("/api/v1/jobs/" + job->id() + "/artifacts/" + first.name());
  ASSERT_TRUE(bytes);
  EXPECT_EQ(bytes->status, 200);
  EXPECT_EQ(bytes->body.size(), first.bytes());
  EXPECT_EQ(bytes->body.substr(0, 6), "\x93NUMPY");
  httplib::Result escape =
      client_->Get("/api/v1/jobs/" + job->id() + "/artifacts/..%2F..%2Fgpuprobe.sqlite");
  ASSERT_TRUE(escape);
  EXPECT_EQ(escape->status, 404);
}

TEST_F(HttpApiTest, CompareAnswersInJsonAndRefusesMismatchedJobsNamingTheField) {
  Start();
  const std::string base = FinishedJob(), cand = FinishedJob();
  const auto compared =
      Json<v1::CompareJobsResponse>("/api/v1/compare?base=" + base + "&candidate=" + cand);
  EXPECT_EQ(compared.base_job_id(), base);
  EXPECT_EQ(compared.candidate_job_id(), cand);
  // cand= is candidate='s short form; giving both is refused, naming the parameter.
  httplib::Result by_short = client_->Get("/api/v1/compare?base=" + base + "&cand=" + cand);
  ASSERT_TRUE(by_short);
  EXPECT_EQ(by_short->status, 200) << by_short->body;
  EXPECT_EQ(Json<v1::CompareJobsResponse>("/api/v1/compare?base=" + base + "&cand=" + cand)
                .candidate_job_id(),
            cand);
  httplib::Result both =
      client_->Get("/api/v1/compare?base=" + base + "&candidate=" + cand + "&cand=" + cand);
  ASSERT_TRUE(both);
  EXPECT_EQ(both->status, 400);
  EXPECT_THAT(both->body, HasSubstr("candidate: "));
  EXPECT_EQ(compared.arms_size(), 3);
  // Two reps keep one sample each: too few to judge.
  EXPECT_EQ(compared.too_few_reps(), 3u);
  httplib::Result missing = client_->Get("/api/v1/compare?base=job-999&cand=" + cand);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  httplib::Result no_base = client_->Get("/api/v1/compare?cand=" + cand);
  ASSERT_TRUE(no_base);
  EXPECT_EQ(no_base->status, 400);
  EXPECT_THAT(no_base->body, HasSubstr("base: missing"));
  httplib::Result itself = client_->Get("/api/v1/compare?base=" + cand + "&cand=" + cand);
  ASSERT_TRUE(itself);
  EXPECT_EQ(itself->status, 400);
  EXPECT_THAT(itself->body, HasSubstr("is the base job itself"));
  v1::SubmitRequest wider;
  v1::SweepRequest* sweep = wider.mutable_sweep();
  sweep->mutable_geometry()->set_experts(32);
  sweep->mutable_geometry()->set_hidden(512);
  sweep->mutable_geometry()->set_ff(64);
  sweep->mutable_geometry()->set_selected(4);
  sweep->set_t_max(1);
  sweep->set_reps(2);
  absl::StatusOr<v1::Job> other = manager_->Submit(wider, "test");
  ASSERT_TRUE(other.ok());
  for (int i = 0; i < 500 && manager_->Get(other->id())->state() != v1::JOB_STATE_SUCCEEDED; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  httplib::Result mismatched =
      client_->Get("/api/v1/compare?base=" + base + "&cand=" + other->id());
  ASSERT_TRUE(mismatched);
  EXPECT_EQ(mismatched->status, 400);
  EXPECT_THAT(mismatched->body, HasSubstr("hidden"));
}

TEST_F(HttpApiTest, QueryValuesKeepTheirOwnEqualsSignAndAreDecoded) {
  Start();
  FinishedJob();
  const std::string cand = FinishedJob();
  httplib::Result pasted = client_->Get("/api/v1/compare?base=label:team=perf&cand=" + cand);
  httplib::Result encoded = client_->Get("/api/v1/compare?base=label%3Ateam%3Dperf&cand=" + cand);
  ASSERT_TRUE(pasted);
  ASSERT_TRUE(encoded);
  EXPECT_EQ(pasted->status, 200) << pasted->body;
  EXPECT_EQ(pasted->body, encoded->body);
  const auto compared =
      Json<v1::CompareJobsResponse>("/api/v1/compare?base=label:team=perf&cand=" + cand);
  EXPECT_EQ(compared.method(), "too little history");
  EXPECT_GE(compared.history_job_ids_size(), 1);
  EXPECT_EQ(Json<v1::ListJobsResponse>("/api/v1/jobs?label=team=p%65rf").jobs_size(), 2);
  // A '%' that starts no escape is a bad request, not a literal (issue 55, item 14).
  for (const std::string query : {"label=team=p%zzrf", "label=team=perf%", "label=team=pe%6"}) {
    httplib::Result bad = client_->Get("/api/v1/jobs?" + query);
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->status, 400) << query;
    EXPECT_THAT(bad->body, HasSubstr("not followed by two hex digits")) << query;
  }
  // A base of several labels takes the jobs that carry all of them.
  httplib::Result none =
      client_->Get("/api/v1/compare?base=label:team=perf,host=a&candidate=" + cand);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 404) << none->body;
  // A label base without a label, or with a label but no value: a client error (issue 55, item
  // 12: `base=label:` was answered 500).
  for (const std::string base : {"label:team", "label:", "label:=x"}) {
    httplib::Result malformed = client_->Get("/api/v1/compare?base=" + base + "&candidate=" + cand);
    ASSERT_TRUE(malformed);
    EXPECT_EQ(malformed->status, 400) << base << ": " << malformed->body;
    EXPECT_THAT(malformed->body, HasSubstr("label:KEY=VALUE[,KEY2=VALUE2]")) << base;
  }
}

TEST_F(HttpApiTest, UnknownParametersAre400UnknownPaths404AndOtherMethods405InJson) {
  Start();
  ExpectBadRequests(
      {"/api/v1/jobs?labels.commit=x", "/api/v1/jobs?label.commit=x", "/api/v1/info?verbose=1",
       "/api/v1/compare?base=job-1&cand=job-2&treshold=0.1"},
      "not a parameter of this path");
  httplib::Result misspelt = client_->Get("/api/v1/jobs?labels.commit=x");
  ASSERT_TRUE(misspelt);
  EXPECT_THAT(misspelt->body, HasSubstr("labels.commit"));
  EXPECT_THAT(misspelt->body, HasSubstr("it takes state, label, created_after"));
  httplib::Result unknown = client_->Get("/api/v2/jobs");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(unknown->get_header_value("Content-Type"), "application/json");
  EXPECT_THAT(unknown->body, HasSubstr("/api/v2/jobs: no such path"));
  httplib::Result post = client_->Post("/api/v1/jobs", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  EXPECT_THAT(post->body, HasSubstr("POST /api/v1/jobs: not allowed"));
  httplib::Result post_unknown = client_->Post("/nowhere", "", "text/plain");
  ASSERT_TRUE(post_unknown);
  EXPECT_EQ(post_unknown->status, 404);
  httplib::Result del = client_->Delete("/api/v1/jobs/job-1");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
}

TEST_F(HttpApiTest, MetricsAreValidPrometheusText) {
  Start();
  FinishedJob();
  // A job shows as finished once its end is stored; its count follows on the same thread right
  // after, so a scrape may fall between the two: the test waits for the count.
  const std::string counted =
      "gpuprobe_jobs_finished_total{probe=\"moe-union\",state=\"succeeded\"} 1\n";
  httplib::Result res = client_->Get("/metrics");
  for (int i = 0; i < 500 && res && !absl::StrContains(res->body, counted); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
    res = client_->Get("/metrics");
  }
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("text/plain; version=0.0.4"));
  const std::regex sample(
      R"(^((gpuprobe|process)_[a-z_]+)(\{([a-z_]+="([^"\\]|\\.)*",?)+\})? -?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$)");
  const std::regex help(R"(^# (HELP|TYPE) ((gpuprobe|process)_[a-z_]+) (.+)$)");
  std::map<std::string, std::string> typed;  // family: its type
  std::istringstream lines(res->body);
  std::string line;
  int samples = 0;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      if (m[1] == "TYPE") typed[m[2]] = m[4];
      continue;
    }
    ASSERT_TRUE(std::regex_match(line, m, sample)) << "not a sample line: " << line;
    // A histogram's series are its family's name and _bucket, _sum or _count.
    std::string family = m[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (!typed.count(family) && absl::EndsWith(family, suffix)) {
        family.resize(family.size() - strlen(suffix));
      }
    }
    EXPECT_TRUE(typed.count(family)) << m[1] << " has no TYPE line before it";
    // Base units: no TB/s, no MHz.
    EXPECT_THAT(family, Not(testing::AnyOf(HasSubstr("tbps"), HasSubstr("mhz"))));
    ++samples;
  }
  EXPECT_GT(samples, 8);
  EXPECT_EQ(typed["gpuprobe_job_duration_seconds"], "histogram");
  EXPECT_EQ(typed["gpuprobe_jobs_finished_total"], "counter");
  EXPECT_THAT(res->body, HasSubstr(counted));
  EXPECT_THAT(res->body, HasSubstr("gpuprobe_job_duration_seconds_count{probe=\"moe-union\"} 1\n"));
  EXPECT_THAT(
      res->body,
      HasSubstr("gpuprobe_job_queue_wait_seconds_bucket{probe=\"moe-union\",le=\"+Inf\"} 1\n"));
  EXPECT_THAT(res->body, HasSubstr("gpuprobe_jobs{state=\"queued\"} 0\n"));
  EXPECT_THAT(res->body, Not(HasSubstr("gpuprobe_jobs{state=\"succeeded\"}")));
  EXPECT_THAT(res->body, HasSubstr("gpuprobe_rows_total 3\n"));
  // The whole and the per-device parts are separate families: sum() over one counts once.
  EXPECT_THAT(res->body, HasSubstr("gpuprobe_queue_depth 0\n"));
  EXPECT_THAT(res->body, HasSubstr("gpuprobe_device_queue_depth{device=\"0\"} 0\n"));
  EXPECT_THAT(res->body, Not(HasSubstr("device=\"all\"")));
  EXPECT_THAT(res->body, HasSubstr("gpuprobe_build_info{version=\"test\",backend=\"cpu\"} 1\n"));
  EXPECT_THAT(res->body, HasSubstr("\nprocess_resident_memory_bytes "));
  // This request's own count appears from the next scrape on.
  httplib::Result again = client_->Get("/metrics");
  ASSERT_TRUE(again);
  EXPECT_THAT(again->body,
              HasSubstr("gpuprobe_http_requests_total{route=\"/metrics\",code=\"200\"} "));
  EXPECT_THAT(res->body,
              HasSubstr("gpuprobe_fleet_device_up{host=\"localhost\",daemon=\"localhost/"));
  EXPECT_THAT(res->body, HasSubstr(",device=\"0\",model=\"cpu (reference kernels)\"} 1\n"));
}

// Fifty clients that send one header line a second (a slow-loris) hold no thread that /metrics
// needs: its median answer over ten scrapes stays under 100 ms.
TEST_F(HttpApiTest, MetricsAnswerWithin100MsWhileFiftySlowConnectionsAreOpen) {
  Start();
  FinishedJob();
  std::vector<std::unique_ptr<testing_support::RawConnection>> slow;
  for (int i = 0; i < 50; ++i) {
    slow.push_back(std::make_unique<testing_support::RawConnection>(port_));
    ASSERT_TRUE(slow.back()->Send("GET /metrics HTTP/1.1\r\n"));
  }
  std::atomic<bool> done = false;
  std::thread trickle([&] {
    while (!done) {
      for (auto& c : slow) c->Send("X-Slow: 1\r\n");
      for (int i = 0; i < 100 && !done; ++i) absl::SleepFor(absl::Milliseconds(10));
    }
  });
  std::vector<absl::Duration> took;
  for (int i = 0; i < 10; ++i) {
    const absl::Time start = absl::Now();
    httplib::Result res = client_->Get("/metrics");
    took.push_back(absl::Now() - start);
    ASSERT_TRUE(res) << i;
    EXPECT_EQ(res->status, 200);
  }
  done = true;
  trickle.join();
  for (auto& c : slow) EXPECT_FALSE(c->ClosedByServer());  // still open all along
  std::sort(took.begin(), took.end());
  EXPECT_LT(took[took.size() / 2], absl::Milliseconds(100)) << "median of 10 scrapes";
}

TEST_F(HttpApiTest, TokensAreRequiredWhenConfigured) {
  const std::string path = temp_.path() + "/tokens";
  {
    std::ofstream out(path);
    out << "dash-secret read dashboard\n";
  }
  absl::StatusOr<AccessControl> access = AccessControl::FromFile(path);
  ASSERT_TRUE(access.ok());
  Start(*access);
  httplib::Result anonymous = client_->Get("/api/v1/info");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_THAT(anonymous->body, HasSubstr("token"));
  httplib::Result wrong = client_->Get("/metrics", {{"Authorization", "Bearer nope"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  httplib::Result ok = client_->Get("/api/v1/info", {{"Authorization", "Bearer dash-secret"}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  httplib::Result page = client_->Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200) << "the page holds no data: it loads without a token";
}

// The page is the installed files (the build tree's copy here), or an operator's own.
TEST_F(HttpApiTest, ThePageIsServedFromItsDirectory) {
  const std::string own = temp_.path() + "/web";
  std::filesystem::create_directory(own);
  std::ofstream(own + "/index.html") << "<p>our page</p>";
  std::ofstream(own + "/sweep.js") << "// our sweep page";
  std::ofstream(own + "/app.js") << "// ours";
  Start({}, LoadWebAssets(own));
  httplib::Result page = client_->Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->body, "<p>our page</p>");
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  httplib::Result script = client_->Get("/app.js");
  ASSERT_TRUE(script);
  EXPECT_EQ(script->body, "// ours");

  absl::StatusOr<std::vector<WebAsset>> installed = LoadWebAssets(DefaultWebRoot());
  ASSERT_TRUE(installed.ok()) << installed.status();
  EXPECT_THAT((*installed)[0].body, HasSubstr("<script src=\"/app.js\">"));
}

TEST_F(HttpApiTest, WithoutItsPageTheApiServesAndThePageSaysWhy) {
  Start({}, LoadWebAssets(temp_.path() + "/nowhere"));
  httplib::Result page = client_->Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 404);
  EXPECT_THAT(page->body, HasSubstr("cannot read " + temp_.path() + "/nowhere/index.html"));
  httplib::Result info = client_->Get("/api/v1/info");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->status, 200);
}

}  // namespace
}  // namespace gpuprobe
