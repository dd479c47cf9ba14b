// gpuprobed: the daemon that owns a host's GPUs and serialises every probe job.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/flag_names.h"
#include "common/status_macros.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "server/api/probe_service.h"
#include "server/device/backend_factory.h"
#include "server/jobs/artifact_store.h"
#include "server/jobs/data_dir_lock.h"
#include "server/jobs/worker_main.h"
#include "server/jobs/worker_process.h"
#include "server/probes/command/command_registrations.h"
#include "server/probes/registry.h"
#include "server/service_notify.h"
#include "server/store/store_url.h"
#include "server/web/http_api.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7070",
          "gRPC address HOST:PORT; port 0 picks a free port (the log line names it)");
ABSL_FLAG(std::string, backend, "auto", "auto (cuda when a GPU is visible, else cpu), cuda, cpu");
ABSL_FLAG(std::string, data_dir, "",
          "where jobs, rows and events are stored (created if missing); default "
          "$XDG_STATE_HOME/gpuprobed, else $HOME/.local/state/gpuprobed");
ABSL_FLAG(int, max_queued_jobs, gpuprobe::QueueLimits{}.max_queued_jobs,
          "jobs that may wait in the queue; more are refused with RESOURCE_EXHAUSTED");
ABSL_FLAG(std::string, http, "127.0.0.1:7071",
          "HTTP address HOST:PORT of the JSON API and /metrics; port 0 picks one; empty: none");
ABSL_FLAG(std::string, tokens, "",
          "file of \"TOKEN ROLE NAME\" lines (roles read, submit, admin); empty: no tokens, "
          "every caller is admin");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain: serve TLS (with --tls-key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert");
ABSL_FLAG(int, max_message_bytes, 4 << 20, "largest request message accepted, bytes");
ABSL_FLAG(double, max_job_seconds, gpuprobe::QueueLimits{}.max_job_seconds,
          "largest estimated device time of one job, seconds");
ABSL_FLAG(std::string, log_level, "info", "trace, debug, info, warn, error");
ABSL_FLAG(std::string, isolation, "process",
          "process: the backend runs in a worker child process, so a crash or a sticky CUDA "
          "error fails one job and the worker is restarted; none: in the daemon");
ABSL_FLAG(std::string, devices, "all",
          "devices to serve, each with its own queue and worker: all, or indices like 0,1 "
          "(the cpu backend is device 0)");
ABSL_FLAG(int64_t, max_artifact_bytes, gpuprobe::QueueLimits{}.max_artifact_bytes,
          "all jobs' artifacts (check --dump) together, bytes; the oldest jobs' are removed to "
          "make room, and a check whose dump alone is larger is refused");
ABSL_FLAG(int64_t, max_store_bytes, 0,
          "largest size of the job store's database file, bytes; writes past it fail as on a full "
          "disk; 0: no bound but the disk's");
ABSL_FLAG(double, min_watchdog_seconds, absl::ToDoubleSeconds(gpuprobe::QueueLimits{}.min_watchdog),
          "a device worker silent for this long plus 10x the job's estimated device time is "
          "killed and its job failed");
ABSL_FLAG(int, cpu_repeat, 1,
          "cpu backend: run each timed kernel this many times per launch (a known slowdown for "
          "testing CI gates; rows say so); 1: as measured");
ABSL_FLAG(std::string, store, "",
          "the job store: sqlite:///ABS/PATH/jobs.db (this daemon alone) or "
          "postgresql://USER@HOST:PORT/DB (shared by a fleet of daemons); default: SQLite at "
          "DATA_DIR/gpuprobe.sqlite");
ABSL_FLAG(std::string, host_name, "",
          "this daemon's name in the fleet, as jobs' --host targets name it; default: the "
          "machine's host name");
ABSL_FLAG(double, lease_seconds, absl::ToDoubleSeconds(gpuprobe::FleetOptions{}.lease),
          "a running job's lease: when its daemon stops heartbeating for this long, another "
          "daemon of the fleet runs it again (attempt 2)");
ABSL_FLAG(std::string, probe_commands, "",
          "a JSON file of commands the command probe may run, with their parameters, axes and "
          "bounds (README: registering a command probe)");
ABSL_FLAG(int, worker_fd, -1, "internal: run as the device worker on this socket");
ABSL_FLAG(int, device, 0, "internal: the device a worker serves");

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

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* flag) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(flag, ": cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// TLS when --tls-cert and --tls-key are both given; plaintext when neither is.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials() {
  const std::string cert = absl::GetFlag(FLAGS_tls_cert), key = absl::GetFlag(FLAGS_tls_key);
  if (cert.empty() && key.empty()) return grpc::InsecureServerCredentials();
  if (cert.empty() || key.empty()) {
    return absl::InvalidArgumentError("tls-cert and tls-key go together");
  }
  grpc::SslServerCredentialsOptions options;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ASSIGN_OR_RETURN(pair.cert_chain, ReadFile(cert, "tls-cert"));
  ASSIGN_OR_RETURN(pair.private_key, ReadFile(key, "tls-key"));
  // Swapped or wrong files would otherwise only surface as "cannot listen".
  if (!absl::StrContains(pair.cert_chain, "-----BEGIN CERTIFICATE-----")) {
    return absl::InvalidArgumentError(
        absl::StrCat("tls-cert: ", cert, " holds no PEM certificate (swapped with --tls-key?)"));
  }
  if (!absl::StrContains(pair.private_key, "PRIVATE KEY-----")) {
    return absl::InvalidArgumentError(
        absl::StrCat("tls-key: ", key, " holds no PEM private key (swapped with --tls-cert?)"));
  }
  options.pem_key_cert_pairs.push_back(std::move(pair));
  return grpc::SslServerCredentials(options);
}

// --devices: "all" (nullopt) or the listed indices.
absl::StatusOr<std::optional<std::vector<int>>> RequestedDevices() {
  const std::string text = absl::GetFlag(FLAGS_devices);
  if (text == "all") return std::nullopt;
  std::vector<int> devices;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int index = 0;
    if (!absl::SimpleAtoi(part, &index) || index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("devices: \"", text, "\" is neither all nor a list like 0,1"));
    }
    devices.push_back(index);
  }
  return devices;
}

// --probe-command NAME=PATH, as often as it is given (taken out before the flags are parsed).
std::vector<std::string>& ProbeCommandFlags() {
  static std::vector<std::string> flags;
  return flags;
}

// The probes this daemon (and each of its workers) serves; INVALID_ARGUMENT names a bad
// --probe-command or --probe-commands.
absl::StatusOr<std::shared_ptr<const gpuprobe::ProbeRegistry>> Probes() {
  ASSIGN_OR_RETURN(
      std::vector<gpuprobe::v1::CommandRegistration> commands,
      gpuprobe::LoadCommandRegistrations(ProbeCommandFlags(), absl::GetFlag(FLAGS_probe_commands)));
  return std::make_shared<const gpuprobe::ProbeRegistry>(
      gpuprobe::ProbeRegistry::Builtin({.commands = std::move(commands)}));
}

absl::StatusOr<std::unique_ptr<gpuprobe::DeviceExecutor>> MakeExecutor(
    int device, const std::shared_ptr<const gpuprobe::ProbeRegistry>& probes) {
  const std::string backend = absl::GetFlag(FLAGS_backend);
  if (absl::GetFlag(FLAGS_isolation) == "none") {
    ASSIGN_OR_RETURN(std::unique_ptr<gpuprobe::Backend> in_process,
                     gpuprobe::MakeBackend(backend, device, absl::GetFlag(FLAGS_cpu_repeat)));
    return std::unique_ptr<gpuprobe::DeviceExecutor>(
        std::make_unique<gpuprobe::InProcessExecutor>(std::move(in_process), probes));
  }
  std::vector<std::string> args = {"--backend=" + backend, absl::StrCat("--device=", device),
                                   absl::StrCat("--cpu_repeat=", absl::GetFlag(FLAGS_cpu_repeat)),
                                   "--log_level=" + absl::GetFlag(FLAGS_log_level),
                                   "--probe_commands=" + absl::GetFlag(FLAGS_probe_commands)};
  for (const std::string& command : ProbeCommandFlags()) {
    args.push_back("--probe_command=" + command);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<gpuprobe::WorkerProcessExecutor> worker,
                   gpuprobe::WorkerProcessExecutor::Start("/proc/self/exe", std::move(args)));
  return std::unique_ptr<gpuprobe::DeviceExecutor>(std::move(worker));
}

// One executor per served device: a worker child process each (--isolation process, the
// default), so that a crash or a sticky CUDA error costs one job; or backends in this process.
absl::StatusOr<std::vector<std::unique_ptr<gpuprobe::DeviceExecutor>>> MakeExecutors(
    const std::shared_ptr<const gpuprobe::ProbeRegistry>& probes) {
  const std::string isolation = absl::GetFlag(FLAGS_isolation);
  if (isolation != "process" && isolation != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat("isolation: \"", isolation, "\" is not process or none"));
  }
  ASSIGN_OR_RETURN(std::optional<std::vector<int>> requested, RequestedDevices());
  std::vector<int> devices = requested.value_or(std::vector<int>{0});
  std::vector<std::unique_ptr<gpuprobe::DeviceExecutor>> executors;
  ASSIGN_OR_RETURN(executors.emplace_back(), MakeExecutor(devices[0], probes));
  // How many devices there are: the first worker counted them, where the driver is loaded.
  const int visible =
      isolation == "process"
          ? static_cast<gpuprobe::WorkerProcessExecutor&>(*executors[0]).visible_devices()
          : gpuprobe::VisibleDevices(absl::GetFlag(FLAGS_backend));
  if (!requested.has_value()) {
    for (int i = 1; i < visible; ++i) devices.push_back(i);
  }
  for (size_t i = 1; i < devices.size(); ++i) {
    if (devices[i] >= visible) {
      return absl::InvalidArgumentError(
          absl::StrFormat("devices: %d is not a device here (%d visible)", devices[i], visible));
    }
    ASSIGN_OR_RETURN(executors.emplace_back(), MakeExecutor(devices[i], probes));
  }
  return executors;
}

// The daemon's numeric flags, each within its range; INVALID_ARGUMENT names the flag.
absl::Status CheckFlags() {
  if (absl::GetFlag(FLAGS_max_queued_jobs) < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("max-queued-jobs: %d; at least 1", absl::GetFlag(FLAGS_max_queued_jobs)));
  }
  if (absl::GetFlag(FLAGS_max_message_bytes) < 4096) {
    return absl::InvalidArgumentError(absl::StrFormat("max-message-bytes: %d; at least 4096",
                                                      absl::GetFlag(FLAGS_max_message_bytes)));
  }
  if (!(absl::GetFlag(FLAGS_max_job_seconds) > 0)) {
    return absl::InvalidArgumentError("max-job-seconds: must be positive");
  }
  if (absl::GetFlag(FLAGS_max_artifact_bytes) < 0 || absl::GetFlag(FLAGS_max_store_bytes) < 0) {
    return absl::InvalidArgumentError("max-artifact-bytes, max-store-bytes: must not be negative");
  }
  if (absl::GetFlag(FLAGS_cpu_repeat) < 1 || absl::GetFlag(FLAGS_cpu_repeat) > 100) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cpu-repeat: %d is outside [1, 100]", absl::GetFlag(FLAGS_cpu_repeat)));
  }
  if (!(absl::GetFlag(FLAGS_min_watchdog_seconds) > 0)) {
    return absl::InvalidArgumentError("min-watchdog-seconds: must be positive");
  }
  if (!(absl::GetFlag(FLAGS_lease_seconds) >= 1) || absl::GetFlag(FLAGS_lease_seconds) > 3600) {
    return absl::InvalidArgumentError(absl::StrFormat("lease-seconds: %g is outside [1, 3600]",
                                                      absl::GetFlag(FLAGS_lease_seconds)));
  }
  if (absl::GetFlag(FLAGS_host_name).size() > 128) {
    return absl::InvalidArgumentError("host-name: longer than 128 bytes");
  }
  for (const auto& [flag, address] :
       {std::pair<const char*, std::string>{"listen", absl::GetFlag(FLAGS_listen)},
        {"http", absl::GetFlag(FLAGS_http)}}) {
    if (address.empty() && std::string(flag) == "http") continue;
    const size_t colon = address.rfind(':');
    int port = -1;
    if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
        port < 0 || port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: \"%s\" is not HOST:PORT with a port in 0..65535", flag, address));
    }
  }
  return absl::OkStatus();
}

std::string MachineHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// This daemon in the store's fleet: its host name, a lease, and a heartbeat every tenth of the
// lease (at most every 5 s).
gpuprobe::FleetOptions FleetFromFlags() {
  gpuprobe::FleetOptions fleet;
  fleet.host = absl::GetFlag(FLAGS_host_name);
  if (fleet.host.empty()) fleet.host = MachineHostName();
  fleet.lease = absl::Seconds(absl::GetFlag(FLAGS_lease_seconds));
  fleet.heartbeat = std::min(absl::Seconds(5), fleet.lease / 10);
  return fleet;
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
  ProbeCommandFlags() = gpuprobe::TakeRepeatedFlag(args, "probe_command");
  if (absl::Status flags = gpuprobe::CheckFlagArguments(args); !flags.ok()) {
    spdlog::error("{}", std::string(flags.message()));
    return 2;
  }
  absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  spdlog::set_level(spdlog::level::from_str(absl::GetFlag(FLAGS_log_level)));
  if (const int fd = absl::GetFlag(FLAGS_worker_fd); fd >= 0) {
    const std::string name = absl::GetFlag(FLAGS_backend);
    absl::StatusOr<std::unique_ptr<gpuprobe::Backend>> backend =
        gpuprobe::MakeBackend(name, absl::GetFlag(FLAGS_device), absl::GetFlag(FLAGS_cpu_repeat));
    if (!backend.ok()) {
      spdlog::error("worker: {}", backend.status().ToString());
      return 2;
    }
    absl::StatusOr<std::shared_ptr<const gpuprobe::ProbeRegistry>> probes = Probes();
    if (!probes.ok()) {
      spdlog::error("worker: {}", probes.status().ToString());
      return 2;
    }
    return gpuprobe::RunWorker(fd, *std::move(backend), gpuprobe::VisibleDevices(name), **probes);
  }
  const sigset_t signals = BlockShutdownSignals();
  if (absl::Status flags = CheckFlags(); !flags.ok()) {
    spdlog::error("{}", flags.ToString());
    return 2;
  }

  std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  if (data_dir.empty()) data_dir = DefaultDataDir();
  // Before anything else touches the directory (or a device): one daemon per data directory.
  absl::StatusOr<gpuprobe::DataDirLock> data_dir_lock = gpuprobe::DataDirLock::Acquire(data_dir);
  if (!data_dir_lock.ok()) {
    spdlog::error("{}", data_dir_lock.status().ToString());
    return 2;
  }
  absl::StatusOr<gpuprobe::StoreUrl> store_url =
      gpuprobe::ParseStoreUrl(absl::GetFlag(FLAGS_store), data_dir);
  if (!store_url.ok()) {
    spdlog::error("{}", store_url.status().ToString());
    return 2;
  }
  // A SQLite store outside the data directory: one daemon per store directory too.
  std::optional<gpuprobe::DataDirLock> store_dir_lock;
  if (store_url->kind == gpuprobe::StoreUrl::Kind::kSqlite) {
    const std::filesystem::path store_dir = std::filesystem::path(store_url->target).parent_path();
    std::error_code ec;
    if (!std::filesystem::equivalent(store_dir, data_dir, ec)) {
      absl::StatusOr<gpuprobe::DataDirLock> lock =
          gpuprobe::DataDirLock::Acquire(store_dir.string());
      if (!lock.ok()) {
        spdlog::error("--store: {}", lock.status().ToString());
        return 2;
      }
      store_dir_lock = *std::move(lock);
    }
  }

  absl::StatusOr<std::shared_ptr<const gpuprobe::ProbeRegistry>> registry = Probes();
  if (!registry.ok()) {
    spdlog::error("{}", registry.status().ToString());
    return 2;
  }
  const std::shared_ptr<const gpuprobe::ProbeRegistry> probes = *std::move(registry);
  absl::StatusOr<std::vector<std::unique_ptr<gpuprobe::DeviceExecutor>>> executors =
      MakeExecutors(probes);
  if (!executors.ok()) {
    spdlog::error("{}", executors.status().ToString());
    return 2;
  }
  for (size_t i = 0; i < executors->size(); ++i) {
    const gpuprobe::Backend& info = (*executors)[i]->info();
    spdlog::info("device {}: backend {}: {}", i, info.Name(), info.Description());
  }
  absl::StatusOr<std::unique_ptr<gpuprobe::JobStore>> store =
      gpuprobe::OpenStore(*store_url, absl::GetFlag(FLAGS_max_store_bytes));
  if (!store.ok()) {
    spdlog::error("{}", store.status().ToString());
    return 2;
  }
  spdlog::info("data in {}; jobs in {}", data_dir,
               store_url->kind == gpuprobe::StoreUrl::Kind::kSqlite
                   ? store_url->target
                   : gpuprobe::MaskedUrl(store_url->target));
  gpuprobe::QueueLimits limits;
  limits.max_queued_jobs = absl::GetFlag(FLAGS_max_queued_jobs);
  limits.max_job_seconds = absl::GetFlag(FLAGS_max_job_seconds);
  limits.max_artifact_bytes = absl::GetFlag(FLAGS_max_artifact_bytes);
  limits.min_watchdog = absl::Seconds(absl::GetFlag(FLAGS_min_watchdog_seconds));
  absl::StatusOr<std::unique_ptr<gpuprobe::JobManager>> manager = gpuprobe::JobManager::Start(
      *std::move(store), *std::move(executors), limits, probes,
      std::make_unique<gpuprobe::ArtifactStore>(data_dir + "/artifacts", limits.max_artifact_bytes),
      FleetFromFlags());
  if (!manager.ok()) {
    spdlog::error("{}", manager.status().ToString());
    return 2;
  }
  gpuprobe::AccessControl access;
  if (const std::string tokens = absl::GetFlag(FLAGS_tokens); !tokens.empty()) {
    absl::StatusOr<gpuprobe::AccessControl> loaded = gpuprobe::AccessControl::FromFile(tokens);
    if (!loaded.ok()) {
      spdlog::error("{}", loaded.status().ToString());
      return 2;
    }
    access = *std::move(loaded);
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = Credentials();
  if (!credentials.ok()) {
    spdlog::error("{}", credentials.status().ToString());
    return 2;
  }
  const bool tokens_on = access.enabled();
  gpuprobe::HttpApi http(**manager, access, GPUPROBE_VERSION);
  gpuprobe::ProbeService service(**manager, std::move(access), GPUPROBE_VERSION);

  // Standard endpoints: grpc.health.v1 (for load balancers and Kubernetes probes) and server
  // reflection (grpcurl).
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  const std::string listen = absl::GetFlag(FLAGS_listen);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, *credentials, &port);
  builder.SetMaxReceiveMessageSize(absl::GetFlag(FLAGS_max_message_bytes));
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    spdlog::error("cannot listen on {}", listen);
    return 1;
  }
  // The device worker answered its hello before the manager started: ready, while the store
  // can write.
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  (*manager)->OnStoreHealth([health](bool writable) { health->SetServingStatus(writable); });
  health->SetServingStatus((*manager)->StoreWritable());
  spdlog::info("gpuprobed {} listening on {}:{} ({}, {})", GPUPROBE_VERSION, HostOf(listen), port,
               absl::GetFlag(FLAGS_tls_cert).empty() ? "plaintext" : "tls",
               tokens_on ? "tokens required" : "no tokens");
  if (const std::string http_address = absl::GetFlag(FLAGS_http); !http_address.empty()) {
    const size_t colon = http_address.rfind(':');  // checked by CheckFlags
    int http_port = -1;
    (void)absl::SimpleAtoi(http_address.substr(colon + 1), &http_port);
    absl::StatusOr<int> bound = http.Start(http_address.substr(0, colon), http_port);
    if (!bound.ok()) {
      spdlog::error("{}", bound.status().ToString());
      return 1;
    }
    spdlog::info("http listening on {}:{}", http_address.substr(0, colon), *bound);
  }
  // Under systemd (Type=notify): ready now that the device workers answered and both listeners
  // are up.
  gpuprobe::NotifyServiceManager("READY=1");

  const int signal = WaitForShutdownSignal(signals);
  spdlog::info("received {}, shutting down", strsignal(signal));
  gpuprobe::NotifyServiceManager("STOPPING=1");
  (*manager)->OnStoreHealth(nullptr);
  health->SetServingStatus(false);
  http.Stop();
  (*manager)->Stop();  // interrupts the running job; it runs again at the next start
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  spdlog::info("stopped");
  return 0;
}
