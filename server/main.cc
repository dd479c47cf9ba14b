// gpuprobed: the daemon that owns a host's GPUs and serialises every probe job.
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "gpuprobe_commit.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "server/api/grpc_request_metrics.h"
#include "server/api/probe_service.h"
#include "server/api/reflection_v1.h"
#include "server/device/backend_factory.h"
#include "server/jobs/artifact_store.h"
#include "server/jobs/data_dir_lock.h"
#include "server/jobs/worker_main.h"
#include "server/jobs/worker_process.h"
#include "server/measure/cold_cache.h"
#include "server/options/daemon_options.h"
#include "server/probes/command/command_registrations.h"
#include "server/probes/registry.h"
#include "server/service_notify.h"
#include "server/store/store_url.h"
#include "server/web/http_api.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

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

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* flag) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(flag, ": cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// TLS when --tls-cert and --tls-key are both given; plaintext when neither is.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials(
    const gpuprobe::DaemonOptions& options) {
  const std::string &cert = options.tls_cert_file, &key = options.tls_key_file;
  if (cert.empty() && key.empty()) return grpc::InsecureServerCredentials();
  if (cert.empty() || key.empty()) {
    return absl::InvalidArgumentError("tls-cert and tls-key go together");
  }
  grpc::SslServerCredentialsOptions ssl;
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
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  return grpc::SslServerCredentials(ssl);
}

// The probes this daemon (and each of its workers) serves; INVALID_ARGUMENT names a bad
// --probe-command or --probe-commands.
absl::StatusOr<std::shared_ptr<const gpuprobe::ProbeRegistry>> Probes(
    const gpuprobe::DaemonOptions& options) {
  ASSIGN_OR_RETURN(
      std::vector<gpuprobe::v1::CommandRegistration> commands,
      gpuprobe::LoadCommandRegistrations(options.probe_commands, options.probe_commands_file));
  ASSIGN_OR_RETURN(gpuprobe::ProbeRegistry probes,
                   gpuprobe::ProbeRegistry::Builtin({.commands = std::move(commands)}));
  return std::make_shared<const gpuprobe::ProbeRegistry>(std::move(probes));
}

// A device that runs jobs, with its cold-cache flush memory taken before any probe's buffers:
// every job then finds the same memory layout, and no cold job fails for want of that memory.
absl::StatusOr<std::unique_ptr<gpuprobe::Backend>> MakeDevice(
    const gpuprobe::DaemonOptions& options, int device) {
  ASSIGN_OR_RETURN(std::unique_ptr<gpuprobe::Backend> backend,
                   gpuprobe::MakeBackend(options.backend, device,
                                         {.cpu_repeat = options.cpu_repeat,
                                          .wait_ns_per_sample = options.inject_delay_ns}));
  RETURN_IF_ERROR(gpuprobe::ColdCache::Of(*backend).status());
  return backend;
}

absl::StatusOr<std::unique_ptr<gpuprobe::DeviceExecutor>> MakeExecutor(
    const gpuprobe::DaemonOptions& options, int device,
    const std::shared_ptr<const gpuprobe::ProbeRegistry>& probes) {
  if (options.isolation == "none") {
    ASSIGN_OR_RETURN(std::unique_ptr<gpuprobe::Backend> in_process, MakeDevice(options, device));
    return std::unique_ptr<gpuprobe::DeviceExecutor>(
        std::make_unique<gpuprobe::InProcessExecutor>(std::move(in_process), probes));
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<gpuprobe::WorkerProcessExecutor> worker,
      gpuprobe::WorkerProcessExecutor::Start("/proc/self/exe", options.WorkerArguments(device)));
  return std::unique_ptr<gpuprobe::DeviceExecutor>(std::move(worker));
}

// One executor per served device: a worker child process each (--isolation process, the
// default), so that a crash or a sticky CUDA error costs one job; or backends in this process.
absl::StatusOr<std::vector<std::unique_ptr<gpuprobe::DeviceExecutor>>> MakeExecutors(
    const gpuprobe::DaemonOptions& options,
    const std::shared_ptr<const gpuprobe::ProbeRegistry>& probes) {
  const std::optional<std::vector<int>>& requested = options.devices;
  std::vector<int> devices = requested.value_or(std::vector<int>{0});
  std::vector<std::unique_ptr<gpuprobe::DeviceExecutor>> executors;
  ASSIGN_OR_RETURN(executors.emplace_back(), MakeExecutor(options, devices[0], probes));
  // How many devices there are: the first worker counted them, where the driver is loaded.
  const int visible =
      options.isolation == "process"
          ? static_cast<gpuprobe::WorkerProcessExecutor&>(*executors[0]).visible_devices()
          : gpuprobe::VisibleDevices(options.backend);
  if (!requested.has_value()) {
    for (int i = 1; i < visible; ++i) devices.push_back(i);
  }
  for (size_t i = 1; i < devices.size(); ++i) {
    if (devices[i] >= visible) {
      return absl::InvalidArgumentError(
          absl::StrFormat("devices: %d is not a device here (%d visible)", devices[i], visible));
    }
    ASSIGN_OR_RETURN(executors.emplace_back(), MakeExecutor(options, devices[i], probes));
  }
  return executors;
}

}  // namespace

int main(int argc, char** argv) {
  // Logs are for people and go to stderr, as a daemon's should; stdout stays free for output.
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  absl::SetProgramUsageMessage(
      "owns this host's GPUs and serves probe jobs over gRPC (README: \"Using it\").\n"
      "  gpuprobed --listen HOST:PORT --backend auto|cuda|cpu --data-dir DIR [flags]");
  // --help lists the daemon's flags (they live in server/options/) under their source file's
  // path in the repository, not the build machine's; --version prints the commit.
  static constexpr absl::string_view kOptionsDir = "server/options/";
  const auto daemon_flags = [](absl::string_view file) {
    return absl::StrContains(file, kOptionsDir);
  };
  const auto repository_path = [](absl::string_view file) {
    const size_t at = file.rfind(kOptionsDir);
    return std::string(at == absl::string_view::npos ? file : file.substr(at));
  };
  absl::SetFlagsUsageConfig({.contains_helpshort_flags = daemon_flags,
                             .contains_help_flags = daemon_flags,
                             .contains_helppackage_flags = daemon_flags,
                             .version_string =
                                 [] {
                                   return absl::StrCat("gpuprobed ", GPUPROBE_VERSION, " (commit ",
                                                       GPUPROBE_COMMIT, ")\n");
                                 },
                             .normalize_filename = repository_path});
  absl::StatusOr<gpuprobe::DaemonOptions> parsed = gpuprobe::ParseDaemonOptions(argc, argv);
  if (!parsed.ok()) {
    spdlog::error("{}", parsed.status().ToString());
    return 2;
  }
  const gpuprobe::DaemonOptions& options = *parsed;
  spdlog::set_level(spdlog::level::from_str(options.log_level));
  if (options.worker_fd >= 0) {
    absl::StatusOr<std::unique_ptr<gpuprobe::Backend>> backend =
        MakeDevice(options, options.device);
    if (!backend.ok()) {
      spdlog::error("worker: {}", backend.status().ToString());
      return 2;
    }
    absl::StatusOr<std::shared_ptr<const gpuprobe::ProbeRegistry>> probes = Probes(options);
    if (!probes.ok()) {
      spdlog::error("worker: {}", probes.status().ToString());
      return 2;
    }
    return gpuprobe::RunWorker(options.worker_fd, *std::move(backend),
                               gpuprobe::VisibleDevices(options.backend), **probes);
  }
  const sigset_t signals = BlockShutdownSignals();

  // A --web-root the operator named must hold the page; without one, a daemon whose page is
  // not installed still serves the JSON API and /metrics, and "/" says why.
  absl::StatusOr<std::vector<gpuprobe::WebAsset>> page = gpuprobe::LoadWebAssets(
      options.web_root.empty() ? gpuprobe::DefaultWebRoot() : options.web_root);
  if (!page.ok() && options.http) {
    if (!options.web_root.empty()) {
      spdlog::error("--web-root: {}", std::string(page.status().message()));
      return 2;
    }
    spdlog::warn("{}; the JSON API and /metrics serve without it",
                 std::string(page.status().message()));
  }

  const std::string& data_dir = options.data_dir;
  // Before anything else touches the directory (or a device): one daemon per data directory.
  absl::StatusOr<gpuprobe::DataDirLock> data_dir_lock = gpuprobe::DataDirLock::Acquire(data_dir);
  if (!data_dir_lock.ok()) {
    spdlog::error("{}", data_dir_lock.status().ToString());
    return 2;
  }
  absl::StatusOr<gpuprobe::StoreUrl> store_url = gpuprobe::ParseStoreUrl(options.store, data_dir);
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

  absl::StatusOr<std::shared_ptr<const gpuprobe::ProbeRegistry>> registry = Probes(options);
  if (!registry.ok()) {
    spdlog::error("{}", registry.status().ToString());
    return 2;
  }
  const std::shared_ptr<const gpuprobe::ProbeRegistry> probes = *std::move(registry);
  absl::StatusOr<std::vector<std::unique_ptr<gpuprobe::DeviceExecutor>>> executors =
      MakeExecutors(options, probes);
  if (!executors.ok()) {
    spdlog::error("{}", executors.status().ToString());
    return 2;
  }
  for (size_t i = 0; i < executors->size(); ++i) {
    const gpuprobe::Backend& info = (*executors)[i]->info();
    spdlog::info("device {}: backend {}: {}", i, info.Name(), info.Description());
  }
  if (options.inject_delay_ns > 0) {
    spdlog::warn(
        "--inject-delay-ns {}: every timed sample holds an injected wait; for testing "
        "gates, never for figures",
        options.inject_delay_ns);
  }
  absl::StatusOr<std::unique_ptr<gpuprobe::JobStore>> store =
      gpuprobe::OpenStore(*store_url, options.max_store_bytes);
  if (!store.ok()) {
    spdlog::error("{}", store.status().ToString());
    return 2;
  }
  spdlog::info("data in {}; jobs in {}", data_dir,
               store_url->kind == gpuprobe::StoreUrl::Kind::kSqlite
                   ? store_url->target
                   : gpuprobe::MaskedUrl(store_url->target));
  absl::StatusOr<std::unique_ptr<gpuprobe::JobManager>> manager =
      gpuprobe::JobManager::Start(*std::move(store), *std::move(executors), options.limits, probes,
                                  std::make_unique<gpuprobe::ArtifactStore>(
                                      data_dir + "/artifacts", options.limits.max_artifact_bytes),
                                  options.fleet);
  if (!manager.ok()) {
    spdlog::error("{}", manager.status().ToString());
    return 2;
  }
  gpuprobe::AccessControl access;
  if (!options.tokens_file.empty()) {
    absl::StatusOr<gpuprobe::AccessControl> loaded =
        gpuprobe::AccessControl::FromFile(options.tokens_file);
    if (!loaded.ok()) {
      spdlog::error("{}", loaded.status().ToString());
      return 2;
    }
    access = *std::move(loaded);
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = Credentials(options);
  if (!credentials.ok()) {
    spdlog::error("{}", credentials.status().ToString());
    return 2;
  }
  const bool tokens_on = access.enabled();
  gpuprobe::HttpApi http(**manager, access, GPUPROBE_VERSION, std::move(page));
  gpuprobe::ProbeService service(**manager, std::move(access), GPUPROBE_VERSION);

  // Standard endpoints: grpc.health.v1 (for load balancers and Kubernetes probes) and server
  // reflection (grpcurl).
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  const std::string& listen = options.listen;
  int port = 0;
  grpc::ServerBuilder builder;
  // gRPC turns SO_REUSEPORT on by default: a second daemon could then listen on the same
  // address and take half its calls.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(listen, *credentials, &port);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.RegisterService(&service);
  // Reflection v1 beside the plugin's v1alpha (InitProtoReflectionServerBuilderPlugin above).
  gpuprobe::ReflectionV1 reflection_v1(
      {gpuprobe::v1::ProbeService::service_full_name(), "grpc.health.v1.Health",
       "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"});
  builder.RegisterService(&reflection_v1);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<gpuprobe::GrpcRequestMetrics>());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    spdlog::error("--listen: cannot listen on {} (in use, or not this host's)", listen);
    return 2;
  }
  // The device worker answered its hello before the manager started: ready, while the store
  // can write.
  // The overall status ("") and the service's own name answer alike: SetServingStatus(bool)
  // sets every service named so far.
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  health->SetServingStatus(gpuprobe::v1::ProbeService::service_full_name(),
                           (*manager)->StoreWritable());
  (*manager)->OnStoreHealth([health](bool writable) { health->SetServingStatus(writable); });
  health->SetServingStatus((*manager)->StoreWritable());
  spdlog::info("gpuprobed {} listening on {}:{} ({}, {})", GPUPROBE_VERSION, options.listen_host,
               port, options.tls_cert_file.empty() ? "plaintext" : "tls",
               tokens_on ? "tokens required" : "no tokens");
  if (options.http) {
    absl::StatusOr<int> bound = http.Start(options.http_host, options.http_port);
    if (!bound.ok()) {
      spdlog::error("{}", bound.status().ToString());
      return 2;
    }
    spdlog::info("http listening on {}:{} (plaintext{})", options.http_host, *bound,
                 options.tls_cert_file.empty() ? "" : ", beside TLS on gRPC");
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
