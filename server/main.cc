// gpuprobed: the daemon that owns a host's GPUs and serialises every probe job.
#include <csignal>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "server/api/probe_service.h"
#include "server/device/backend_factory.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7070",
          "gRPC address HOST:PORT; port 0 picks a free port (the log line names it)");
ABSL_FLAG(std::string, backend, "auto", "auto (cuda when a GPU is visible, else cpu), cuda, cpu");
ABSL_FLAG(std::string, log_level, "info", "trace, debug, info, warn, error");

namespace {

// Blocks SIGINT and SIGTERM in every thread (threads inherit the mask), so that only
// WaitForShutdownSignal, in main, receives them.
sigset_t BlockShutdownSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

int WaitForShutdownSignal(const sigset_t& signals) {
  int signal = 0;
  sigwait(&signals, &signal);
  return signal;
}

std::string HostOf(const std::string& address) {
  const size_t colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("gpuprobed --listen HOST:PORT --backend auto|cuda|cpu");
  absl::ParseCommandLine(argc, argv);
  spdlog::set_level(spdlog::level::from_str(absl::GetFlag(FLAGS_log_level)));
  const sigset_t signals = BlockShutdownSignals();

  absl::StatusOr<std::unique_ptr<gpuprobe::Backend>> backend =
      gpuprobe::MakeBackend(absl::GetFlag(FLAGS_backend));
  if (!backend.ok()) {
    spdlog::error("{}", backend.status().ToString());
    return 2;
  }
  spdlog::info("backend {}: {}", (*backend)->Name(), (*backend)->Description());
  gpuprobe::DeviceWorker worker(*std::move(backend));
  gpuprobe::ProbeService service(worker, gpuprobe::SweepLimits{}, GPUPROBE_VERSION);

  const std::string listen = absl::GetFlag(FLAGS_listen);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    spdlog::error("cannot listen on {}", listen);
    return 1;
  }
  spdlog::info("gpuprobed {} listening on {}:{}", GPUPROBE_VERSION, HostOf(listen), port);

  const int signal = WaitForShutdownSignal(signals);
  spdlog::info("received {}, shutting down", strsignal(signal));
  worker.Stop();  // cancels the running job, so its stream finishes before the deadline
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  spdlog::info("stopped");
  return 0;
}
