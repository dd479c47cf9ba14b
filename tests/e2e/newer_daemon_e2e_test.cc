// The CLI against a newer daemon: a job in a state, and events of a kind, that this client's
// proto does not know are shown as unknown, never a crash; a job of a probe it does not know,
// with a result larger than gRPC's default message, shows whole; a stream that breaks prints
// no half document.
#include "absl/strings/str_split.h"
#include "common/api_json.h"
#include "gmock/gmock.h"
#include "gpuprobe/v1/probe.grpc.pb.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "tests/e2e/subprocess.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;
using testing_support::CommandResult;
using testing_support::RunCommand;

constexpr int kNewState = 42;

// Answers every job as one in state 42, ended, with one event of a kind unknown here (field 99
// of JobEvent) and one finished event in state 42.
class NewerDaemon final : public v1::ProbeService::Service {
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest* request,
                      v1::Job* job) override {
    job->set_id(request->job_id());
    job->set_state(static_cast<v1::JobState>(kNewState));
    job->set_probe("moe-union");
    return grpc::Status::OK;
  }
  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*,
                        v1::ListJobsResponse* response) override {
    v1::Job* job = response->add_jobs();
    job->set_id("job-1");
    job->set_state(static_cast<v1::JobState>(kNewState));
    return grpc::Status::OK;
  }
  grpc::Status Watch(grpc::ServerContext*, const v1::WatchRequest*,
                     grpc::ServerWriter<v1::JobEvent>* writer) override {
    v1::JobEvent unknown;
    unknown.GetReflection()->MutableUnknownFields(&unknown)->AddVarint(99, 1);
    writer->Write(unknown);
    v1::JobEvent finished;
    finished.mutable_finished()->set_state(static_cast<v1::JobState>(kNewState));
    writer->Write(finished);
    return grpc::Status::OK;
  }
};

// A server of `service` on a loopback port of its own, and its address.
struct FakeServer {
  explicit FakeServer(grpc::Service& service) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    address = "127.0.0.1:" + std::to_string(port);
  }
  int port = 0;
  std::unique_ptr<grpc::Server> server;
  std::string address;
};

TEST(NewerDaemonTest, UnknownStatesAndEventsAreShownAsSuchNeverACrash) {
  NewerDaemon service;
  FakeServer fake(service);
  ASSERT_NE(fake.port, 0);
  const std::string address = fake.address;
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{{"show", "job-1"},
                                             {"--format", "json", "show", "job-1"},
                                             {"--format", "csv", "show", "job-1"},
                                             {"jobs"},
                                             {"--format", "tsv", "jobs"},
                                             {"watch", "job-1"},
                                             {"wait", "job-1"}}) {
    std::vector<std::string> argv = {GPUPROBE_PATH, "--server", address};
    argv.insert(argv.end(), command.begin(), command.end());
    absl::StatusOr<CommandResult> r = RunCommand(argv, {}, ::testing::TempDir());
    ASSERT_TRUE(r.ok()) << r.status();
    const std::string what = command[command.size() > 2 ? 2 : 0] + " (" + command[0] + ")";
    EXPECT_TRUE(r->exit_code == 0 || r->exit_code == 1) << what << ": " << r->exit_code << r->err;
    if (command[0] != "--format" || command[1] != "json") {
      EXPECT_THAT(r->out + r->err, HasSubstr("unknown (42)")) << what;
    }
  }
}

constexpr size_t kBigCell = 10 << 20;  // past gRPC's default 4 MB message

// A succeeded job of a probe this build does not know (its parameters an Any of an unknown
// type) whose stored result has a 10 MB axis cell; job-broken's stream fails after one result.
class StoredJobDaemon final : public v1::ProbeService::Service {
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest* request,
                      v1::Job* job) override {
    job->set_id(request->job_id());
    job->set_state(v1::JOB_STATE_SUCCEEDED);
    job->set_probe("future");
    job->mutable_request()->mutable_probe()->set_probe("future");
    job->mutable_resolved()->set_type_url("type.googleapis.com/gpuprobe.v1.FutureParams");
    job->mutable_resolved()->set_value("\x08\x01");
    return grpc::Status::OK;
  }
  grpc::Status Watch(grpc::ServerContext*, const v1::WatchRequest* request,
                     grpc::ServerWriter<v1::JobEvent>* writer) override {
    v1::JobEvent result;
    v1::AxisValue* axis = result.mutable_result()->add_axes();
    axis->set_name("name");
    axis->set_text_value(std::string(kBigCell, 'x'));
    v1::MetricStats* metric = result.mutable_result()->add_metrics();
    metric->set_name("time_us");
    metric->set_median(2.5);
    writer->Write(result);
    if (request->job_id() == "job-broken") {
      return grpc::Status(grpc::StatusCode::DATA_LOSS, "a stored event does not parse");
    }
    v1::JobEvent finished;
    finished.mutable_finished()->set_state(v1::JOB_STATE_SUCCEEDED);
    writer->Write(finished);
    return grpc::Status::OK;
  }
};

TEST(NewerDaemonTest, AnyStoredJobShowsWholeAndABrokenStreamPrintsNoHalfDocument) {
  StoredJobDaemon service;
  FakeServer fake(service);
  ASSERT_NE(fake.port, 0);
  const auto show = [&](const std::string& job) {
    absl::StatusOr<CommandResult> r =
        RunCommand({GPUPROBE_PATH, "--server", fake.address, "--format", "json", "show", job}, {},
                   ::testing::TempDir());
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  };
  const CommandResult whole = show("job-1");
  EXPECT_EQ(whole.exit_code, 0) << whole.err;
  const std::vector<std::string> lines = absl::StrSplit(whole.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << whole.err;
  EXPECT_THAT(lines[0], HasSubstr(R"("@type":"type.googleapis.com/gpuprobe.v1.FutureParams")"));
  EXPECT_THAT(lines[0], HasSubstr(R"("probe":"future")"));
  v1::Result row;
  ASSERT_TRUE(ApiJsonToMessage(lines[1], &row).ok()) << lines[1].substr(0, 200);
  EXPECT_EQ(row.axes(0).text_value().size(), kBigCell);
  EXPECT_EQ(row.metrics(0).median(), 2.5);

  const CommandResult broken = show("job-broken");
  EXPECT_NE(broken.exit_code, 0);
  EXPECT_EQ(broken.out, "") << "a failed read prints nothing on stdout";
  EXPECT_THAT(broken.err, HasSubstr("a stored event does not parse"));
}

}  // namespace
}  // namespace gpuprobe
