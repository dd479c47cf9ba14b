// gpuprobed: the daemon that owns a host's GPUs and serialises every probe job.
#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "common/flag_names.h"
#include "server/api/probe_service.h"
#include "server/device/backend_factory.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7070",
          "gRPC address HOST:PORT; port 0 picks a free port (the log line names it)");
ABSL_FLAG(std::string, backend, "auto", "auto (cuda when a GPU is visible, else cpu), cuda, cpu");
ABSL_FLAG(std::string, data_dir, "",
          "where jobs, rows and events are stored (created if missing); default "
          "$XDG_STATE_HOME/gpuprobed, else $HOME/.local/state/gpuprobed");
ABSL_FLAG(int, max_queued_jobs, gpuprobe::QueueLimits{}.max_queued_jobs,
          "jobs that may wait in the queue; more are refused with RESOURCE_EXHAUSTED");
ABSL_FLAG(double, max_job_seconds, gpuprobe::QueueLimits{}.max_job_seconds,
          "largest estimated device time of one job, seconds");
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

std::string DefaultDataDir() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state != '\0') {
    return std::string(state) + "/gpuprobed";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.local/state/gpuprobed";
}

std::string HostOf(const std::string& address) {
  const size_t colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "gpuprobed --listen HOST:PORT --backend auto|cuda|cpu --data-dir DIR");
  std::vector<std::string> storage;
  std::vector<char*> args = gpuprobe::DashesToUnderscores(argc, argv, storage);
  absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  spdlog::set_level(spdlog::level::from_str(absl::GetFlag(FLAGS_log_level)));
  const sigset_t signals = BlockShutdownSignals();

  absl::StatusOr<std::unique_ptr<gpuprobe::Backend>> backend =
      gpuprobe::MakeBackend(absl::GetFlag(FLAGS_backend));
  if (!backend.ok()) {
    spdlog::error("{}", backend.status().ToString());
    return 2;
  }
  spdlog::info("backend {}: {}", (*backend)->Name(), (*backend)->Description());
  std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  if (data_dir.empty()) data_dir = DefaultDataDir();
  absl::StatusOr<std::unique_ptr<gpuprobe::JobStore>> store = gpuprobe::JobStore::Open(data_dir);
  if (!store.ok()) {
    spdlog::error("{}", store.status().ToString());
    return 2;
  }
  spdlog::info("data in {}", data_dir);
  gpuprobe::QueueLimits limits;
  limits.max_queued_jobs = absl::GetFlag(FLAGS_max_queued_jobs);
  limits.max_job_seconds = absl::GetFlag(FLAGS_max_job_seconds);
  absl::StatusOr<std::unique_ptr<gpuprobe::JobManager>> manager =
      gpuprobe::JobManager::Start(*std::move(store), *std::move(backend), limits);
  if (!manager.ok()) {
    spdlog::error("{}", manager.status().ToString());
    return 2;
  }
  gpuprobe::ProbeService service(**manager, GPUPROBE_VERSION);

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
  (*manager)->Stop();  // interrupts the running job; it runs again at the next start
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  spdlog::info("stopped");
  return 0;
}
