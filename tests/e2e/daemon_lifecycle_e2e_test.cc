// The daemon's life as operators see it: health and reflection, SIGTERM, kill -9 and a restart,
// TLS with tokens, and a worker crash.
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "tests/e2e/sweep_e2e_fixture.h"

namespace gpuprobe {
namespace {

TEST_F(SweepEndToEndTest, HealthReportsServingAndReflectionV1AndV1alphaListTheService) {
  auto channel = grpc::CreateChannel(*server_, grpc::InsecureChannelCredentials());
  grpc::health::v1::HealthCheckRequest health_request;
  grpc::health::v1::HealthCheckResponse health;
  grpc::ClientContext health_context;
  ASSERT_TRUE(grpc::health::v1::Health::NewStub(channel)
                  ->Check(&health_context, health_request, &health)
                  .ok());
  EXPECT_EQ(health.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  grpc::ClientContext reflection_context;
  auto stream = grpc::reflection::v1alpha::ServerReflection::NewStub(channel)->ServerReflectionInfo(
      &reflection_context);
  grpc::reflection::v1alpha::ServerReflectionRequest request;
  request.set_list_services("");
  ASSERT_TRUE(stream->Write(request));
  stream->WritesDone();
  grpc::reflection::v1alpha::ServerReflectionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  std::vector<std::string> services;
  for (const auto& s : response.list_services_response().service()) services.push_back(s.name());
  EXPECT_THAT(services, testing::Contains("gpuprobe.v1.ProbeService"));
  EXPECT_THAT(services, testing::Contains("grpc.health.v1.Health"));
  EXPECT_THAT(services, testing::Contains("grpc.reflection.v1.ServerReflection"));
  (void)stream->Finish();

  // v1, as newer clients ask first: the services, a symbol's file with its imports, a miss.
  grpc::ClientContext v1_context;
  auto v1_stream =
      grpc::reflection::v1::ServerReflection::NewStub(channel)->ServerReflectionInfo(&v1_context);
  grpc::reflection::v1::ServerReflectionRequest v1_request;
  v1_request.set_list_services("");
  ASSERT_TRUE(v1_stream->Write(v1_request));
  v1_request.set_file_containing_symbol("gpuprobe.v1.ProbeService");
  ASSERT_TRUE(v1_stream->Write(v1_request));
  v1_request.set_file_containing_symbol("gpuprobe.v1.NoSuchThing");
  ASSERT_TRUE(v1_stream->Write(v1_request));
  v1_stream->WritesDone();
  grpc::reflection::v1::ServerReflectionResponse listed, file, missing;
  ASSERT_TRUE(v1_stream->Read(&listed) && v1_stream->Read(&file) && v1_stream->Read(&missing));
  std::vector<std::string> v1_services;
  for (const auto& s : listed.list_services_response().service()) v1_services.push_back(s.name());
  EXPECT_THAT(v1_services, testing::Contains("gpuprobe.v1.ProbeService"));
  ASSERT_GT(file.file_descriptor_response().file_descriptor_proto_size(), 1);  // and its imports
  google::protobuf::FileDescriptorProto probe_proto;
  ASSERT_TRUE(
      probe_proto.ParseFromString(file.file_descriptor_response().file_descriptor_proto(0)));
  EXPECT_EQ(probe_proto.name(), "gpuprobe/v1/probe.proto");
  EXPECT_EQ(missing.error_response().error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(v1_stream->Finish().ok());
  // The HTTP side is up too, on the port it logged.
  EXPECT_TRUE(daemon_->HttpAddress(absl::Seconds(1)).ok());
}

// Runs last in this suite: stops the shared daemon.
TEST_F(SweepEndToEndTest, ZzSigtermStopsTheDaemonCleanly) {
  absl::StatusOr<int> code = daemon_->StopWith(SIGTERM, absl::Seconds(20));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0) << daemon_->Log();
  EXPECT_THAT(daemon_->Log(), HasSubstr("stopped"));
}

}  // namespace
}  // namespace gpuprobe

namespace gpuprobe {
namespace {

// The scenario: three jobs queued, the daemon killed with -9 while the first runs,
// restarted on the same data directory; all three finish with every row.
TEST(RestartEndToEndTest, JobsSurviveKillNine) {
  const testing_support::ScopedTempDir temp("gpuprobe_restart");
  const std::string dir = temp.path();
  const std::vector<std::string> daemon_argv = {GPUPROBED_PATH, "--listen",   "127.0.0.1:0",
                                                "--backend",    "cpu",        "--http",
                                                "127.0.0.1:0",  "--data-dir", dir + "/data"};
  auto start = [&](const std::string& log) -> std::pair<ChildProcess, std::string> {
    absl::StatusOr<ChildProcess> d = ChildProcess::Start(daemon_argv, dir + "/" + log);
    EXPECT_TRUE(d.ok());
    absl::StatusOr<std::string> server = d->GrpcAddress();
    EXPECT_TRUE(server.ok()) << server.status();
    return {*std::move(d), *server};
  };
  auto cli = [&](const std::string& server, std::vector<std::string> args) {
    args.insert(args.begin(), {GPUPROBE_PATH, "--server", server});
    absl::StatusOr<CommandResult> r = RunCommand(args, {}, dir);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : CommandResult{};
  };
  auto [first, server] = start("first.log");
  std::vector<std::string> jobs;
  for (const char* reps : {"300", "3", "3"}) {
    const CommandResult r = cli(server, {"submit", "--experts", "64", "--hidden", "512", "--ff",
                                         "128", "--selected", "4", "--t", "3", "--reps", reps});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    jobs.push_back(std::vector<std::string>(absl::StrSplit(r.out, '\n', absl::SkipEmpty())).back());
  }
  ASSERT_TRUE(first.AwaitLog("job " + jobs[0] + " started", absl::Seconds(20)).ok());
  absl::StatusOr<int> killed = first.StopWith(SIGKILL, absl::Seconds(10));
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(*killed, 128 + SIGKILL);

  auto [second, server2] = start("second.log");
  for (const std::string& job : jobs) {
    EXPECT_EQ(cli(server2, {"wait", job, "--timeout", "120s"}).exit_code, 0) << job;
    const CommandResult shown = cli(server2, {"--format", "tsv", "show", job});
    EXPECT_EQ(ParseTsv(shown.out).rows.size(), 6u) << job << shown.out << shown.err;
  }
  EXPECT_THAT(second.Log(), testing::ContainsRegex("job " + jobs[0] +
                                                   " was interrupted: its gpuprobed [^ ]+ stopped "
                                                   "while the job ran; queued again"));
  EXPECT_THAT(cli(server2, {"show", jobs[0]}).err, HasSubstr("attempts 2"));
}

}  // namespace
}  // namespace gpuprobe

namespace gpuprobe {
namespace {

// TLS with a self-signed certificate and bearer tokens: the CLI with the CA and a token gets
// through; without the token, or with a read token for a submit, it is refused with a reason.
TEST(SecureEndToEndTest, TlsAndTokens) {
  const testing_support::ScopedTempDir temp("gpuprobe_tls");
  const std::string dir = temp.path();
  absl::StatusOr<CommandResult> cert =
      RunCommand({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                  "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                  "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem"},
                 {}, dir);
  ASSERT_TRUE(cert.ok() && cert->exit_code == 0) << (cert.ok() ? cert->err : "");
  {
    std::ofstream tokens(dir + "/tokens");
    tokens << "# token role name\nreader-secret read dashboard\nci-secret submit ci\n";
  }
  absl::StatusOr<ChildProcess> daemon =
      ChildProcess::Start({GPUPROBED_PATH, "--listen", "127.0.0.1:0", "--backend", "cpu", "--http",
                           "127.0.0.1:0", "--data-dir", dir + "/data", "--tokens", dir + "/tokens",
                           "--tls-cert", dir + "/cert.pem", "--tls-key", dir + "/key.pem"},
                          dir + "/daemon.log");
  ASSERT_TRUE(daemon.ok());
  absl::StatusOr<std::string> address = daemon->GrpcAddress();
  ASSERT_TRUE(address.ok()) << address.status();
  const std::string server = *address;
  auto cli = [&](std::vector<std::string> args, std::vector<std::string> env) {
    args.insert(args.begin(), {GPUPROBE_PATH, "--server", server});
    absl::StatusOr<CommandResult> r = RunCommand(args, env, dir);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : CommandResult{};
  };
  const std::string ca = "GPUPROBE_TLS_CA=" + dir + "/cert.pem";
  const std::vector<std::string> sweep = {"submit", "--experts", "32",         "--hidden", "256",
                                          "--ff",   "64",        "--selected", "4",        "--t",
                                          "1",      "--reps",    "2"};

  CommandResult r = cli({"info"}, {ca, "GPUPROBE_TOKEN=reader-secret"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = cli({"info"}, {ca});
  EXPECT_EQ(r.exit_code, 7);  // not authenticated: a code of its own
  EXPECT_THAT(r.err, HasSubstr("token"));
  r = cli(sweep, {ca, "GPUPROBE_TOKEN=reader-secret"});
  EXPECT_EQ(r.exit_code, 7);  // not allowed
  EXPECT_THAT(r.err, HasSubstr("submit role"));
  r = cli(sweep, {ca, "GPUPROBE_TOKEN=ci-secret"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string job =
      std::vector<std::string>(absl::StrSplit(r.out, '\n', absl::SkipEmpty())).back();
  r = cli({"show", job}, {ca, "GPUPROBE_TOKEN=reader-secret"});
  EXPECT_THAT(r.err, HasSubstr("by ci"));               // the submitter is the token's name
  r = cli({"info"}, {"GPUPROBE_TOKEN=reader-secret"});  // plaintext against a TLS port
  EXPECT_EQ(r.exit_code, 4);
}

}  // namespace
}  // namespace gpuprobe

namespace gpuprobe {
namespace {

// A worker that dies under a job fails that job with the reason; the daemon starts a fresh
// worker and the next job succeeds.
TEST(WorkerIsolationEndToEndTest, AWorkerCrashFailsOneJobAndTheNextSucceeds) {
  const testing_support::ScopedTempDir temp("gpuprobe_crash");
  const std::string dir = temp.path();
  absl::StatusOr<ChildProcess> daemon =
      ChildProcess::Start({GPUPROBED_PATH, "--listen", "127.0.0.1:0", "--backend", "cpu", "--http",
                           "127.0.0.1:0", "--data-dir", dir + "/data"},
                          dir + "/daemon.log", {"GPUPROBE_ALLOW_FAULTS=1"});
  ASSERT_TRUE(daemon.ok());
  absl::StatusOr<std::string> server = daemon->GrpcAddress();
  ASSERT_TRUE(server.ok()) << server.status();
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {GPUPROBE_PATH, "--server", *server});
    absl::StatusOr<CommandResult> r = RunCommand(args, {}, dir);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : CommandResult{};
  };
  const std::vector<std::string>& small = kSmallSweep;
  std::vector<std::string> crash = {"submit", "--label", "gpuprobe.fault=abort"};
  crash.insert(crash.end(), small.begin(), small.end());
  const CommandResult crashed = cli(crash);
  ASSERT_EQ(crashed.exit_code, 0) << crashed.err;
  const std::string crash_job =
      std::vector<std::string>(absl::StrSplit(crashed.out, '\n', absl::SkipEmpty())).back();
  EXPECT_EQ(cli({"wait", crash_job, "--timeout", "60s"}).exit_code, 1);
  const CommandResult shown = cli({"show", crash_job});
  EXPECT_THAT(shown.err, HasSubstr("worker died"));
  EXPECT_THAT(shown.err, HasSubstr("signal 6"));

  std::vector<std::string> fine = {"sweep", "--format", "tsv"};
  fine.insert(fine.end(), small.begin(), small.end());
  const CommandResult next = cli(fine);
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(ParseTsv(next.out).rows.size(), 3u);
}

}  // namespace
}  // namespace gpuprobe
