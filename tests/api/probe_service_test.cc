// The gRPC service in process, on the cpu backend and a store in a temporary directory, over a
// real loopback port (tests/api/probe_service_fixture.h).
#include "server/api/probe_service.h"

#include <fstream>
#include <thread>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "google/protobuf/util/time_util.h"
#include "tests/api/probe_service_fixture.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;

TEST_F(ProbeServiceTest, RunStreamsAcceptedStartedProgressRowsFinishedInOrder) {
  std::vector<v1::JobEvent> events;
  const grpc::Status status = RunAll(Small(3), &events);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(events.size(), 1u + 1 + 3 + 6 + 1);
  EXPECT_TRUE(events[0].has_accepted());
  EXPECT_FALSE(events[0].accepted().job_id().empty());
  ASSERT_TRUE(events[1].has_started());
  EXPECT_EQ(events[1].started().device(), "cpu (reference kernels)");
  EXPECT_EQ(events[1].started().sweep().arms_size(), 6);
  EXPECT_EQ(events[1].attempt(), 1u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(events[2 + i].progress().reps_done(), i + 1u);
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(events[5 + i].has_row());
    EXPECT_EQ(events[5 + i].row().arm_index(), static_cast<uint32_t>(i));
    EXPECT_EQ(events[5 + i].row().kept_reps(), 2u);
    EXPECT_GT(events[5 + i].row().gu_us(), 0.0);
  }
  EXPECT_DOUBLE_EQ(events[10].row().vs_reference(), 1.0);
  ASSERT_TRUE(events[11].has_finished());
  EXPECT_EQ(events[11].finished().state(), v1::JOB_STATE_SUCCEEDED);
  // The v1 stream names the reference row's section at the end, as it did.
  EXPECT_EQ(events[11].finished().reference_section_us(), events[10].row().section_us());
  EXPECT_EQ(events[10].row().section_us(), events[10].row().gu_us() + events[10].row().down_us());
  const v1::Job job = Get(events[0].accepted().job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.results(), 6u);
  EXPECT_EQ(job.attempts(), 1u);
  EXPECT_EQ(job.device(), "cpu (reference kernels)");
}

TEST_F(ProbeServiceTest, ACpuSweepsRecordSaysItHasNoTelemetry) {
  std::vector<v1::JobEvent> events;
  ASSERT_TRUE(RunAll(Small(3), &events).ok());
  const v1::Job job = Get(events[0].accepted().job_id());
  ASSERT_TRUE(job.has_telemetry());
  EXPECT_FALSE(job.telemetry().available());
  EXPECT_EQ(job.telemetry().note(), "none: the cpu backend has no device telemetry");
  EXPECT_EQ(job.telemetry().samples(), 0u);
  for (const v1::JobEvent& e : events) EXPECT_FALSE(e.has_telemetry());
}

// The cpu backend with telemetry: a throttled reading at the third sample, and a foreign
// process from the fifth on.
class TelemetryCpuBackend final : public CpuBackend {
 public:
  std::optional<TelemetrySample> SampleTelemetry() override {
    ++samples_;
    TelemetrySample s{.sm_mhz = 1980 - (samples_ == 3 ? 600 : 0),
                      .memory_mhz = 3201,
                      .clock_event_reasons = samples_ == 3 ? 0x20u : 0u,  // sw thermal
                      .power_w = 120.0 + samples_,
                      .temperature_c = 40};
    if (samples_ >= 5) s.foreign_processes.push_back({4242, "python3"});
    return s;
  }

 private:
  int samples_ = 0;
};

// Every reading is streamed live; the first and the disturbed ones (and one every 2 s) are stored
// (issue 55, item 8); the record summarizes them all.
TEST_F(ProbeServiceTest, ReadingsStreamLiveDisturbedOnesAreStoredAndTheRecordSummarizesAll) {
  StopDaemon();
  make_backend_ = [] { return std::make_unique<TelemetryCpuBackend>(); };
  StartDaemon();
  std::vector<v1::JobEvent> live;
  ASSERT_TRUE(RunAll(Small(6), &live).ok());
  const std::string id = live[0].accepted().job_id();
  std::vector<v1::JobEvent> replay;
  ASSERT_TRUE(WatchAll(id, &replay).ok());
  const auto readings_of = [](const std::vector<v1::JobEvent>& events) {
    std::vector<v1::TelemetryReading> readings;
    for (const v1::JobEvent& e : events) {
      if (e.has_telemetry()) readings.push_back(e.telemetry());
    }
    return readings;
  };
  const std::vector<v1::TelemetryReading> streamed = readings_of(live);
  ASSERT_EQ(streamed.size(), 6u);  // one per rep, rep 0 included
  EXPECT_EQ(streamed[2].sm_mhz(), 1380u);
  EXPECT_THAT(streamed[2].throttle_reasons(), testing::ElementsAre("sw_thermal_slowdown"));
  ASSERT_EQ(streamed[4].foreign_processes_size(), 1);
  EXPECT_EQ(streamed[4].foreign_processes(0).name(), "python3");
  // Stored: rep 0's and the disturbed ones, 2, 4 and 5, and any a 2 s interval took, in order.
  const std::vector<v1::TelemetryReading> readings = readings_of(replay);
  std::vector<int> stored_reps;
  for (size_t rep = 0, next = 0; rep < streamed.size() && next < readings.size(); ++rep) {
    if (google::protobuf::util::MessageDifferencer::Equals(readings[next], streamed[rep])) {
      stored_reps.push_back(static_cast<int>(rep));
      ++next;
    }
  }
  EXPECT_EQ(stored_reps.size(), readings.size()) << "each stored reading is one streamed";
  for (const int rep : {0, 2, 4, 5}) EXPECT_THAT(stored_reps, testing::Contains(rep));

  const v1::Job job = Get(id);
  ASSERT_TRUE(job.telemetry().available());
  EXPECT_EQ(job.telemetry().samples(), 6u);
  EXPECT_EQ(job.telemetry().sm_mhz_min(), 1380u);
  EXPECT_EQ(job.telemetry().sm_mhz_max(), 1980u);
  EXPECT_EQ(job.telemetry().sm_mhz_median(), 1980u);
  EXPECT_DOUBLE_EQ(job.telemetry().power_w_max(), 126.0);
  EXPECT_THAT(job.telemetry().throttle_reasons(), testing::ElementsAre("sw_thermal_slowdown"));
  ASSERT_EQ(job.telemetry().foreign_processes_size(), 1);
  EXPECT_EQ(job.telemetry().foreign_processes(0).pid(), 4242u);
  // Rows of the disturbed reps say so; the device's live reading is the last sample.
  for (const v1::JobEvent& e : replay) {
    if (e.has_row()) {
      EXPECT_THAT(e.row().disturbance(), testing::HasSubstr("sw_thermal_slowdown"));
    }
  }
  grpc::ClientContext context;
  v1::ServerInfo info;
  ASSERT_TRUE(stub_->GetServerInfo(&context, v1::GetServerInfoRequest(), &info).ok());
  ASSERT_EQ(info.devices_size(), 1);
  EXPECT_DOUBLE_EQ(info.devices(0).telemetry().power_w(), 126.0);
  EXPECT_EQ(info.devices(0).telemetry().foreign_processes_size(), 1);
}

TEST_F(ProbeServiceTest, TheArmOrderIsRecordedAndEveryArmStillGetsItsRow) {
  for (v1::ArmOrder order : {v1::ARM_ORDER_ROTATE, v1::ARM_ORDER_SHUFFLE}) {
    v1::SweepRequest request = Small(4);
    request.set_order(order);
    std::vector<v1::JobEvent> events;
    ASSERT_TRUE(RunAll(request, &events).ok());
    ASSERT_TRUE(events[1].has_started());
    EXPECT_EQ(events[1].started().sweep().order(), order);
    int rows = 0;
    for (const v1::JobEvent& e : events) rows += e.has_row() ? 1 : 0;
    EXPECT_EQ(rows, 6);
  }
}

TEST_F(ProbeServiceTest, InvalidRequestIsRefusedBeforeItIsStored) {
  v1::SweepRequest request = Small();
  request.mutable_geometry()->set_hidden(500);
  std::vector<v1::JobEvent> events;
  const grpc::Status status = RunAll(request, &events);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("hidden"));
  EXPECT_TRUE(events.empty());
  grpc::ClientContext context;
  v1::ListJobsResponse list;
  ASSERT_TRUE(stub_->ListJobs(&context, v1::ListJobsRequest(), &list).ok());
  EXPECT_EQ(list.jobs_size(), 0);
}

TEST_F(ProbeServiceTest, EveryValidationRuleIsRefusedNamingItsField) {
  struct Case {
    std::function<void(v1::SweepRequest&)> edit;
    const char* field;
  };
  const Case cases[] = {
      {[](v1::SweepRequest& r) { r.mutable_geometry()->set_hidden(500); }, "hidden"},
      {[](v1::SweepRequest& r) { r.mutable_geometry()->set_ff(100); }, "ff"},
      {[](v1::SweepRequest& r) { r.mutable_geometry()->set_selected(0); }, "selected"},
      {[](v1::SweepRequest& r) { r.mutable_geometry()->set_experts(100000); }, "experts"},
      {[](v1::SweepRequest& r) { r.set_t_max(0); }, "t"},
      {[](v1::SweepRequest& r) { r.set_reps(1); }, "reps"},
      {[](v1::SweepRequest& r) { r.add_unions(2); }, "unions"},
      {[](v1::SweepRequest& r) { r.add_t_values(0); }, "t_values"},
      {[](v1::SweepRequest& r) { r.add_variants(v1::KERNEL_VARIANT_UNION); }, "variant"},
      {[](v1::SweepRequest& r) { (*r.mutable_labels())[""] = "x"; }, "labels"},
  };
  for (const Case& c : cases) {
    v1::SubmitRequest request;
    *request.mutable_sweep() = Small();
    c.edit(*request.mutable_sweep());
    grpc::ClientContext context;
    v1::Job job;
    const grpc::Status status = stub_->Submit(&context, request, &job);
    EXPECT_FALSE(status.ok()) << c.field;
    EXPECT_THAT(status.error_message(), HasSubstr(c.field));
  }
}

TEST_F(ProbeServiceTest, SweepLargerThanTheDeviceIsRefusedWithResourceExhausted) {
  v1::SweepRequest request = Small();
  request.mutable_geometry()->set_experts(8192);
  request.mutable_geometry()->set_hidden(65536);
  request.mutable_geometry()->set_ff(65536);
  std::vector<v1::JobEvent> events;
  const grpc::Status status = RunAll(request, &events);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("GiB"));
}

TEST_F(ProbeServiceTest, ConcurrentJobsRunOneAtATime) {
  struct Seen {
    uint32_t position = 99;
    int64_t started_us = 0, finished_us = 0;
  };
  auto run = [&](Seen* seen) {
    std::vector<v1::JobEvent> events;
    EXPECT_TRUE(RunAll(Small(20), &events).ok());
    using google::protobuf::util::TimeUtil;
    for (const v1::JobEvent& e : events) {
      if (e.has_accepted()) seen->position = e.accepted().queue_position();
      if (e.has_started()) {
        seen->started_us = TimeUtil::TimestampToMicroseconds(e.started().started_at());
      }
      if (e.has_finished()) {
        seen->finished_us = TimeUtil::TimestampToMicroseconds(e.finished().finished_at());
      }
    }
  };
  Seen a, b;
  std::thread ta(run, &a);
  std::thread tb(run, &b);
  ta.join();
  tb.join();
  const Seen& first = a.started_us < b.started_us ? a : b;
  const Seen& second = a.started_us < b.started_us ? b : a;
  EXPECT_EQ(first.position, 0u);
  EXPECT_EQ(second.position, 1u);
  EXPECT_GE(second.started_us, first.finished_us) << "the jobs overlapped on the device";
}

TEST_F(ProbeServiceTest, ClientThatLeavesDoesNotStopItsJob) {
  grpc::ClientContext context;
  std::vector<v1::JobEvent> events;
  std::string id;
  RunAll(Small(40), &events, &context, [&](const v1::JobEvent& e) {
    if (e.has_accepted()) id = e.accepted().job_id();
    if (e.has_progress() && e.progress().reps_done() == 2) context.TryCancel();
  });
  ASSERT_FALSE(id.empty());
  std::vector<v1::JobEvent> rest;
  ASSERT_TRUE(WatchAll(id, &rest).ok());
  EXPECT_EQ(rest.back().finished().state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(Get(id).results(), 6u);
}

TEST_F(ProbeServiceTest, SubmitAnswersAtOnceAndAnIdempotentRetryReturnsTheSameJob) {
  const v1::Job first = Submit(Small(3), "ci-build-42");
  EXPECT_TRUE(first.state() == v1::JOB_STATE_QUEUED || first.state() == v1::JOB_STATE_RUNNING);
  const v1::Job again = Submit(Small(3), "ci-build-42");
  EXPECT_EQ(again.id(), first.id());
  const v1::Job other = Submit(Small(3), "ci-build-43");
  EXPECT_NE(other.id(), first.id());
}

TEST_F(ProbeServiceTest, ARunRetriedWithItsIdempotencyKeyStreamsTheSameJob) {
  // Issue 55, item 10: a Run whose accepted event never arrived made a second job on a retry.
  const auto run = [&](const std::string& key) {
    grpc::ClientContext context;
    if (!key.empty()) context.AddMetadata("idempotency-key", key);
    std::vector<v1::JobEvent> events;
    EXPECT_TRUE(RunAll(Small(3), &events, &context).ok());
    EXPECT_FALSE(events.empty());
    return events;
  };
  const std::vector<v1::JobEvent> first = run("ci-run-7");
  const std::vector<v1::JobEvent> again = run("ci-run-7");
  ASSERT_TRUE(first[0].has_accepted() && again[0].has_accepted());
  EXPECT_EQ(again[0].accepted().job_id(), first[0].accepted().job_id());
  EXPECT_EQ(again.size(), std::count_if(first.begin(), first.end(),
                                        [](const v1::JobEvent& e) { return e.has_stored_at(); }))
      << "the retry streams the whole job, as stored";
  EXPECT_TRUE(again.back().has_finished());
  EXPECT_NE(run("")[0].accepted().job_id(), first[0].accepted().job_id());
  // The same key on Submit names the same job: one key space.
  EXPECT_EQ(Submit(Small(3), "ci-run-7").id(), first[0].accepted().job_id());
}

// The live stream's stored events (those with stored_at; progress and readings that are not
// stored are told live only) are the replay, in order.
TEST_F(ProbeServiceTest, WatchReplayEqualsTheLiveStreamsStoredEvents) {
  std::vector<v1::JobEvent> live;
  ASSERT_TRUE(RunAll(Small(4), &live).ok());
  std::vector<v1::JobEvent> replay;
  ASSERT_TRUE(WatchAll(live[0].accepted().job_id(), &replay).ok());
  EXPECT_EQ(std::count_if(live.begin(), live.end(),
                          [](const v1::JobEvent& e) { return e.has_progress(); }),
            4)
      << "every rep's progress, live";
  std::erase_if(live, [](const v1::JobEvent& e) { return !e.has_stored_at(); });
  ASSERT_EQ(replay.size(), live.size());
  for (size_t i = 0; i < live.size(); ++i) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(live[i], replay[i]))
        << "event " << i;
  }
}

TEST_F(ProbeServiceTest, FiftyConcurrentWatchersEachReceiveEveryRowInOrder) {
  const v1::Job job = Submit(Small(30));
  std::vector<std::vector<v1::JobEvent>> seen(50);
  std::vector<std::thread> watchers;
  for (auto& events : seen) {
    watchers.emplace_back([&, out = &events] { EXPECT_TRUE(WatchAll(job.id(), out).ok()); });
  }
  for (std::thread& t : watchers) t.join();
  for (const auto& events : seen) {
    std::vector<uint32_t> arms;
    for (const v1::JobEvent& e : events) {
      if (e.has_row()) arms.push_back(e.row().arm_index());
    }
    EXPECT_EQ(arms, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
    EXPECT_TRUE(events.back().has_finished());
  }
}

TEST_F(ProbeServiceTest, CancelQueuedAndRunningJobs) {
  const v1::Job running = Submit(Small(5000));
  const v1::Job queued = Submit(Small(3));
  // Wait until the first one runs.
  for (int i = 0; i < 500 && Get(running.id()).state() != v1::JOB_STATE_RUNNING; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  grpc::ClientContext c1;
  v1::CancelJobRequest cancel;
  cancel.set_job_id(queued.id());
  v1::Job result;
  ASSERT_TRUE(stub_->CancelJob(&c1, cancel, &result).ok());
  EXPECT_EQ(result.state(), v1::JOB_STATE_CANCELLED);

  grpc::ClientContext c2;
  cancel.set_job_id(running.id());
  ASSERT_TRUE(stub_->CancelJob(&c2, cancel, &result).ok());
  std::vector<v1::JobEvent> events;
  const grpc::Status watched = WatchAll(running.id(), &events);
  EXPECT_EQ(watched.error_code(), grpc::StatusCode::CANCELLED);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().finished().state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(Get(running.id()).state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(Get(queued.id()).attempts(), 0u);  // never started

  grpc::ClientContext c3;
  EXPECT_EQ(stub_->CancelJob(&c3, cancel, &result).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(ProbeServiceTest, ListJobsFiltersByStateAndLabelAndPages) {
  v1::SweepRequest labelled = Small(2);
  (*labelled.mutable_labels())["branch"] = "main";
  std::vector<v1::JobEvent> events;
  ASSERT_TRUE(RunAll(labelled, &events).ok());
  ASSERT_TRUE(RunAll(Small(2), &events).ok());
  ASSERT_TRUE(RunAll(Small(2), &events).ok());

  v1::ListJobsRequest by_label;
  (*by_label.mutable_labels())["branch"] = "main";
  grpc::ClientContext c1;
  v1::ListJobsResponse list;
  ASSERT_TRUE(stub_->ListJobs(&c1, by_label, &list).ok());
  ASSERT_EQ(list.jobs_size(), 1);
  EXPECT_EQ(list.jobs(0).request().sweep().labels().at("branch"), "main");

  v1::ListJobsRequest paged;
  paged.add_states(v1::JOB_STATE_SUCCEEDED);
  paged.set_page_size(2);
  grpc::ClientContext c2;
  ASSERT_TRUE(stub_->ListJobs(&c2, paged, &list).ok());
  EXPECT_EQ(list.jobs_size(), 2);
  ASSERT_FALSE(list.next_page_token().empty());
  paged.set_page_token(list.next_page_token());
  grpc::ClientContext c3;
  ASSERT_TRUE(stub_->ListJobs(&c3, paged, &list).ok());
  EXPECT_EQ(list.jobs_size(), 1);
  EXPECT_TRUE(list.next_page_token().empty());
}

TEST_F(ProbeServiceTest, UnknownJobIsNotFound) {
  grpc::ClientContext context;
  v1::GetJobRequest request;
  request.set_job_id("job-999");
  v1::Job job;
  const grpc::Status status = stub_->GetJob(&context, request, &job);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("job_id"));
}

TEST_F(ProbeServiceTest, AFullQueueRefusesWithResourceExhausted) {
  StopDaemon();
  QueueLimits limits;
  limits.max_queued_jobs = 1;
  StartDaemon(limits);
  const v1::Job running = Submit(Small(5000));
  for (int i = 0; i < 500 && Get(running.id()).state() != v1::JOB_STATE_RUNNING; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  Submit(Small(3));  // queued: the queue is full now
  v1::SubmitRequest request;
  *request.mutable_sweep() = Small(3);
  grpc::ClientContext context;
  v1::Job job;
  const grpc::Status status = stub_->Submit(&context, request, &job);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("queue"));
}

TEST_F(ProbeServiceTest, RestartRequeuesTheInterruptedJobOnceThenFailsIt) {
  const v1::Job job = Submit(Small(10000));
  for (int i = 0; i < 500 && Get(job.id()).state() != v1::JOB_STATE_RUNNING; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  const v1::Job queued = Submit(Small(2));
  StopDaemon();  // interrupts the running job
  StartDaemon();
  // Attempt 2 runs; interrupt it too.
  for (int i = 0; i < 500 && Get(job.id()).attempts() != 2; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(Get(job.id()).attempts(), 2u);
  StopDaemon();
  StartDaemon();
  const v1::Job failed = Get(job.id());
  EXPECT_EQ(failed.state(), v1::JOB_STATE_FAILED);
  EXPECT_THAT(failed.error_message(), HasSubstr("2 times"));
  std::vector<v1::JobEvent> events;
  ASSERT_TRUE(WatchAll(queued.id(), &events).ok());  // the queued job survived and ran
  EXPECT_EQ(events.back().finished().state(), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(ProbeServiceTest, EachRoleIsAllowedItsCallsAndRefusedTheRest) {
  StopDaemon();
  const std::string tokens = data_dir_ + "/tokens";
  {
    std::ofstream out(tokens);
    out << "r read dash\nalice-t submit alice\nbob-t submit bob\nroot-t admin ops\n";
  }
  absl::StatusOr<AccessControl> access = AccessControl::FromFile(tokens);
  ASSERT_TRUE(access.ok()) << access.status();
  access_ = *access;
  StartDaemon();
  auto as = [](grpc::ClientContext& context, const std::string& token) {
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
  };
  auto submit = [&](const std::string& token, v1::Job* job) {
    grpc::ClientContext context;
    as(context, token);
    v1::SubmitRequest request;
    *request.mutable_sweep() = Small(5000);
    return stub_->Submit(&context, request, job);
  };
  auto cancel = [&](const std::string& token, const std::string& id) {
    grpc::ClientContext context;
    as(context, token);
    v1::CancelJobRequest request;
    request.set_job_id(id);
    v1::Job job;
    return stub_->CancelJob(&context, request, &job);
  };
  v1::Job job;
  EXPECT_EQ(submit("", &job).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(submit("nope", &job).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  const grpc::Status refused = submit("r", &job);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(refused.error_message(), HasSubstr("submit role"));
  {
    grpc::ClientContext context;
    as(context, "r");
    v1::ListJobsResponse list;
    EXPECT_TRUE(stub_->ListJobs(&context, v1::ListJobsRequest(), &list).ok());
  }
  for (const std::string scheme : {"bearer", "BEARER", "Bearer  "}) {
    // RFC 6750: the scheme is case-insensitive (issue 55, item 14).
    grpc::ClientContext context;
    context.AddMetadata("authorization", scheme + " r");
    v1::ListJobsResponse list;
    EXPECT_TRUE(stub_->ListJobs(&context, v1::ListJobsRequest(), &list).ok()) << scheme;
  }
  v1::Job alices, bobs;
  ASSERT_TRUE(submit("alice-t", &alices).ok());
  ASSERT_TRUE(submit("bob-t", &bobs).ok());
  EXPECT_EQ(alices.submitter(), "alice");
  const grpc::Status not_hers = cancel("alice-t", bobs.id());
  EXPECT_EQ(not_hers.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(not_hers.error_message(), HasSubstr("own jobs"));
  EXPECT_EQ(cancel("r", alices.id()).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(cancel("alice-t", alices.id()).ok());
  EXPECT_TRUE(cancel("root-t", bobs.id()).ok());  // admin cancels anyone's
}

TEST(AccessControlTest, MalformedTokenFilesNameTheLine) {
  const testing_support::ScopedTempDir temp("gpuprobe_bad_tokens");
  const std::string path = temp.path() + "/tokens";
  {
    std::ofstream out(path);
    out << "# comment\nt1 read a\nt2 superuser b\n";
  }
  absl::StatusOr<AccessControl> access = AccessControl::FromFile(path);
  ASSERT_FALSE(access.ok());
  EXPECT_THAT(std::string(access.status().message()), HasSubstr("line 3"));
  EXPECT_THAT(std::string(access.status().message()), HasSubstr("superuser"));
}

TEST(AccessControlTest, ATokenGivenTwiceIsRefusedNamingBothLines) {
  const testing_support::ScopedTempDir temp("gpuprobe_twice_tokens");
  const std::string path = temp.path() + "/tokens";
  std::ofstream(path) << "t1 read alice\nt2 submit bob\n# the same token, another role\n"
                         "t1 admin mallory\n";
  absl::StatusOr<AccessControl> access = AccessControl::FromFile(path);
  ASSERT_FALSE(access.ok());
  EXPECT_THAT(std::string(access.status().message()), HasSubstr("line 4: the token of line 1"));
}

TEST_F(ProbeServiceTest, EachDeviceRunsItsOwnQueueAndJobsMayPinOne) {
  StopDaemon();
  StartDaemon({}, /*devices=*/2);
  const v1::Job a = Submit(Small(5000));
  const v1::Job b = Submit(Small(5000));
  for (int i = 0; i < 300 && (Get(a.id()).state() != v1::JOB_STATE_RUNNING ||
                              Get(b.id()).state() != v1::JOB_STATE_RUNNING);
       ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(Get(a.id()).state(), v1::JOB_STATE_RUNNING);  // both at once: one per device
  EXPECT_EQ(Get(b.id()).state(), v1::JOB_STATE_RUNNING);
  EXPECT_NE(Get(a.id()).device_index(), Get(b.id()).device_index());

  v1::SubmitRequest pinned;
  *pinned.mutable_sweep() = Small(2);
  pinned.set_device(1);
  grpc::ClientContext c1;
  v1::Job job;
  ASSERT_TRUE(stub_->Submit(&c1, pinned, &job).ok());
  EXPECT_EQ(job.queue_position(), 2u);  // both devices busy
  for (const v1::Job& j : {a, b}) {
    grpc::ClientContext c;
    v1::CancelJobRequest cancel;
    cancel.set_job_id(j.id());
    v1::Job ignored;
    ASSERT_TRUE(stub_->CancelJob(&c, cancel, &ignored).ok());
  }
  std::vector<v1::JobEvent> events;
  ASSERT_TRUE(WatchAll(job.id(), &events).ok());
  EXPECT_EQ(Get(job.id()).device_index(), 1u);

  pinned.set_device(5);
  grpc::ClientContext c2;
  const grpc::Status refused = stub_->Submit(&c2, pinned, &job);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("device: 5"));

  grpc::ClientContext c3;
  v1::ServerInfo info;
  ASSERT_TRUE(stub_->GetServerInfo(&c3, v1::GetServerInfoRequest(), &info).ok());
  EXPECT_EQ(info.devices_size(), 2);
}

TEST_F(ProbeServiceTest, ServerInfoDescribesTheBackend) {
  grpc::ClientContext context;
  v1::ServerInfo info;
  ASSERT_TRUE(stub_->GetServerInfo(&context, v1::GetServerInfoRequest(), &info).ok());
  EXPECT_EQ(info.backend(), "cpu");
  EXPECT_EQ(info.device(), "cpu (reference kernels)");
  EXPECT_EQ(info.version(), "test");
  EXPECT_GT(info.device_memory_bytes(), 0u);
}

}  // namespace
}  // namespace gpuprobe
