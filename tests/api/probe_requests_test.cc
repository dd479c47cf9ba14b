// Jobs of any probe through the envelope (ProbeRequest) and the probes' own descriptions
// (ListProbes), over the gRPC service on the cpu backend.
#include "gmock/gmock.h"
#include "tests/api/probe_service_fixture.h"

namespace gpuprobe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::SubmitRequest MoeByText() {
  v1::SubmitRequest submit;
  v1::ProbeRequest* probe = submit.mutable_probe();
  probe->set_probe("moe-union");
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"experts", "64"},
                                                        {"hidden", "512"},
                                                        {"ff", "128"},
                                                        {"selected", "4"},
                                                        {"t_values", "1,2"},
                                                        {"reps", "3"},
                                                        {"timing", "graph"}}) {
    (*probe->mutable_param_values())[name] = value;
  }
  (*probe->mutable_labels())["commit"] = "abc";
  return submit;
}

TEST_F(ProbeServiceTest, ListProbesDescribesEveryProbeWithItsParametersAxesAndMetrics) {
  StartDaemon();
  grpc::ClientContext context;
  v1::ListProbesResponse list;
  ASSERT_TRUE(stub_->ListProbes(&context, v1::ListProbesRequest(), &list).ok());
  ASSERT_GE(list.probes_size(), 1);
  const v1::ProbeInfo* moe = nullptr;
  for (const v1::ProbeInfo& p : list.probes()) {
    if (p.name() == "moe-union") moe = &p;
  }
  ASSERT_NE(moe, nullptr);
  EXPECT_TRUE(moe->has_check());
  EXPECT_EQ(moe->params_type(), "gpuprobe.v1.SweepRequest");
  std::vector<std::string> axes, metrics, params;
  for (const auto& a : moe->axes()) axes.push_back(a.name());
  for (const auto& m : moe->metrics()) metrics.push_back(m.name());
  for (const auto& p : moe->params()) params.push_back(p.name());
  EXPECT_THAT(axes, ElementsAre("variant", "t", "slots", "union"));
  EXPECT_THAT(metrics, ElementsAre("gu_us", "down_us"));
  EXPECT_THAT(params, ::testing::Contains("hidden"));
  EXPECT_THAT(params, ::testing::Contains("timing"));
}

TEST_F(ProbeServiceTest, AProbeRequestRunsAndItsRecordCarriesTheResolvedSpec) {
  StartDaemon();
  grpc::ClientContext context;
  v1::Job job;
  const grpc::Status submitted = stub_->Submit(&context, MoeByText(), &job);
  ASSERT_TRUE(submitted.ok()) << submitted.error_message();
  EXPECT_EQ(job.probe(), "moe-union");
  EXPECT_FALSE(job.check());
  v1::SweepRequest resolved;
  ASSERT_TRUE(job.resolved().UnpackTo(&resolved));
  EXPECT_EQ(resolved.geometry().hidden(), 512u);
  EXPECT_EQ(resolved.reps(), 3u);
  EXPECT_EQ(resolved.timing(), v1::TIMING_MODE_GRAPH);
  EXPECT_EQ(resolved.seed(), 1u);  // a default, filled in and stored

  std::vector<v1::JobEvent> events;
  ASSERT_TRUE(WatchAll(job.id(), &events).ok());
  int rows = 0;
  for (const v1::JobEvent& e : events) {
    if (e.has_started()) {
      EXPECT_EQ(e.started().probe(), "moe-union");
      ASSERT_EQ(e.started().arms_size(), 3);  // t = 1: union 4; t = 2: unions 4, 8
      EXPECT_EQ(e.started().arms(2).axes(3).name(), "union");
      EXPECT_EQ(e.started().arms(2).axes(3).int_value(), 8);
      EXPECT_EQ(e.started().resolved().SerializeAsString(), job.resolved().SerializeAsString());
    }
    rows += e.has_row() ? 1 : 0;
  }
  EXPECT_EQ(rows, 3);
  EXPECT_EQ(Get(job.id()).state(), v1::JOB_STATE_SUCCEEDED);
  // Its labels are the job's: a filter finds it.
  grpc::ClientContext list_context;
  v1::ListJobsRequest filter;
  (*filter.mutable_labels())["commit"] = "abc";
  v1::ListJobsResponse listed;
  ASSERT_TRUE(stub_->ListJobs(&list_context, filter, &listed).ok());
  ASSERT_EQ(listed.jobs_size(), 1);
  EXPECT_EQ(listed.jobs(0).id(), job.id());
}

TEST_F(ProbeServiceTest, AnUnknownProbeOrParameterIsRefusedBeforeAnythingIsStored) {
  StartDaemon();
  auto refused = [&](const v1::SubmitRequest& request) {
    grpc::ClientContext context;
    v1::Job job;
    const grpc::Status status = stub_->Submit(&context, request, &job);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    return status.error_message();
  };
  v1::SubmitRequest unknown = MoeByText();
  unknown.mutable_probe()->set_probe("dense-gemv");
  EXPECT_THAT(refused(unknown), HasSubstr("probe: no probe \"dense-gemv\""));
  v1::SubmitRequest bad = MoeByText();
  (*bad.mutable_probe()->mutable_param_values())["timing"] = "sometimes";
  EXPECT_THAT(refused(bad), HasSubstr("param timing: \"sometimes\" is not one of events|graph"));
  v1::SubmitRequest limit = MoeByText();
  (*limit.mutable_probe()->mutable_param_values())["reps"] = "1";
  EXPECT_THAT(refused(limit), HasSubstr("reps"));
  grpc::ClientContext context;
  v1::ListJobsResponse listed;
  ASSERT_TRUE(stub_->ListJobs(&context, v1::ListJobsRequest(), &listed).ok());
  EXPECT_EQ(listed.jobs_size(), 0);
}

TEST_F(ProbeServiceTest, ReadBandwidthRunsAndChecksThroughTheService) {
  StartDaemon();
  v1::SubmitRequest submit;
  v1::ProbeRequest* probe = submit.mutable_probe();
  probe->set_probe("read-bandwidth");
  (*probe->mutable_param_values())["sizes_bytes"] = "65536,131072";
  (*probe->mutable_param_values())["default_sizes"] = "false";
  (*probe->mutable_param_values())["caches"] = "warm";
  (*probe->mutable_param_values())["timing"] = "events";
  (*probe->mutable_param_values())["reps"] = "3";
  grpc::ClientContext context;
  v1::Job job;
  ASSERT_TRUE(stub_->Submit(&context, submit, &job).ok());
  EXPECT_EQ(job.probe(), "read-bandwidth");
  std::vector<v1::JobEvent> events;
  ASSERT_TRUE(WatchAll(job.id(), &events).ok());
  std::vector<v1::Result> results;
  for (const v1::JobEvent& e : events) {
    if (e.has_result()) results.push_back(e.result());
  }
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].axes(0).name(), "size_bytes");
  EXPECT_EQ(results[1].axes(0).int_value(), 131072);
  EXPECT_EQ(results[1].attempt(), 1u);
  EXPECT_EQ(results[1].device(), "cpu (reference kernels)");
  EXPECT_EQ(Get(job.id()).results(), 2u);

  probe->set_check(true);
  grpc::ClientContext check_context;
  v1::Job check;
  ASSERT_TRUE(stub_->Submit(&check_context, submit, &check).ok());
  EXPECT_TRUE(check.check());
  std::vector<v1::JobEvent> checked;
  ASSERT_TRUE(WatchAll(check.id(), &checked).ok());
  int passed = 0;
  for (const v1::JobEvent& e : checked) passed += e.has_check() && e.check().passed() ? 1 : 0;
  EXPECT_EQ(passed, 2);
  EXPECT_EQ(Get(check.id()).state(), v1::JOB_STATE_SUCCEEDED);
}

}  // namespace
}  // namespace gpuprobe
