// The CLI against a newer daemon: a job in a state, and events of a kind, that this client's
// proto does not know are shown as unknown, never a crash.
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

TEST(NewerDaemonTest, UnknownStatesAndEventsAreShownAsSuchNeverACrash) {
  NewerDaemon service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
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

}  // namespace
}  // namespace gpuprobe
