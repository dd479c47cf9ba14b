#include "server/daemon/daemon.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server_builder.h"
#include "server/api/grpc_request_metrics.h"
#include "server/artifacts/artifact_store.h"
#include "server/daemon/device_executors.h"
#include "server/daemon/service_notify.h"
#include "server/daemon/tls_credentials.h"
#include "server/store/store_url.h"
#include "server/web/web_assets.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

// `status` with its message after `prefix` ("--store: ...").
absl::Status Prefixed(const std::string& prefix, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

// A --web-root the operator named must hold the page; without one, a daemon whose page is not
// installed still serves the JSON API and /metrics, and "/" says why.
absl::StatusOr<absl::StatusOr<std::vector<WebAsset>>> PageOf(const DaemonOptions& options) {
  absl::StatusOr<std::vector<WebAsset>> page =
      LoadWebAssets(options.web_root.empty() ? DefaultWebRoot() : options.web_root);
  if (!page.ok() && options.http) {
    if (!options.web_root.empty()) return Prefixed("--web-root: ", page.status());
    spdlog::warn("{}; the JSON API and /metrics serve without it",
                 std::string(page.status().message()));
  }
  return page;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(const DaemonOptions& options) {
  std::unique_ptr<Daemon> d(new Daemon());
  ASSIGN_OR_RETURN(absl::StatusOr<std::vector<WebAsset>> page, PageOf(options));
  const std::string& data_dir = options.data_dir;
  // Before anything else touches the directory (or a device): one daemon per data directory.
  ASSIGN_OR_RETURN(d->data_dir_lock_, DataDirLock::Acquire(data_dir));
  ASSIGN_OR_RETURN(const StoreUrl store_url, ParseStoreUrl(options.store, data_dir));
  // A SQLite store outside the data directory: one daemon per store directory too.
  if (store_url.kind == StoreUrl::Kind::kSqlite) {
    const std::filesystem::path store_dir = std::filesystem::path(store_url.target).parent_path();
    std::error_code ec;
    if (!std::filesystem::equivalent(store_dir, data_dir, ec)) {
      absl::StatusOr<DataDirLock> lock = DataDirLock::Acquire(store_dir.string());
      if (!lock.ok()) return Prefixed("--store: ", lock.status());
      d->store_dir_lock_ = *std::move(lock);
    }
  }

  ASSIGN_OR_RETURN(const std::shared_ptr<const ProbeRegistry> probes, ProbesOf(options));
  ASSIGN_OR_RETURN(std::vector<std::unique_ptr<DeviceExecutor>> executors,
                   DeviceExecutorsOf(options));
  for (size_t i = 0; i < executors.size(); ++i) {
    const Backend& info = executors[i]->info();
    spdlog::info("device {}: backend {}: {}", i, info.Name(), info.Description());
  }
  if (options.inject_delay_ns > 0) {
    spdlog::warn(
        "--inject-delay-ns {}: every timed sample holds an injected wait; for testing "
        "gates, never for figures",
        options.inject_delay_ns);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<JobStore> store, OpenStore(store_url, options.max_store_bytes));
  spdlog::info(
      "data in {}; jobs in {}", data_dir,
      store_url.kind == StoreUrl::Kind::kSqlite ? store_url.target : MaskedUrl(store_url.target));
  ASSIGN_OR_RETURN(d->manager_, JobManager::Start(
                                    std::move(store), std::move(executors), options.limits, probes,
                                    std::make_unique<ArtifactStore>(
                                        data_dir + "/artifacts", options.limits.max_artifact_bytes),
                                    options.fleet));
  AccessControl access;
  if (!options.tokens_file.empty()) {
    ASSIGN_OR_RETURN(access, AccessControl::FromFile(options.tokens_file));
  }
  ASSIGN_OR_RETURN(const std::shared_ptr<grpc::ServerCredentials> credentials,
                   ServerCredentialsOf(options));
  const bool tokens_on = access.enabled();
  d->http_ = std::make_unique<HttpApi>(*d->manager_, access, GPUPROBE_VERSION, std::move(page));
  d->service_ = std::make_unique<ProbeService>(*d->manager_, std::move(access), GPUPROBE_VERSION);

  // Standard endpoints: grpc.health.v1 (for load balancers and Kubernetes probes) and server
  // reflection (grpcurl).
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  int port = 0;
  grpc::ServerBuilder builder;
  // gRPC turns SO_REUSEPORT on by default: a second daemon could then listen on the same
  // address and take half its calls.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(options.listen, credentials, &port);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.RegisterService(d->service_.get());
  // Reflection v1 beside the plugin's v1alpha (InitProtoReflectionServerBuilderPlugin above).
  d->reflection_v1_ = std::make_unique<ReflectionV1>(std::vector<std::string>{
      v1::ProbeService::service_full_name(), "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"});
  builder.RegisterService(d->reflection_v1_.get());
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<GrpcRequestMetrics>());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  d->server_ = builder.BuildAndStart();
  if (d->server_ == nullptr || port == 0) {
    return absl::UnavailableError(absl::StrCat("--listen: cannot listen on ", options.listen,
                                               " (in use, or not this host's)"));
  }
  // The device workers answered their hello before the manager started: ready, while the store
  // can write. The overall status ("") and the service's own name answer alike:
  // SetServingStatus(bool) sets every service named so far.
  grpc::HealthCheckServiceInterface* health = d->server_->GetHealthCheckService();
  health->SetServingStatus(v1::ProbeService::service_full_name(),
                           d->manager_->store_health().Writable());
  d->manager_->store_health().OnChange(
      [health](bool writable) { health->SetServingStatus(writable); });
  health->SetServingStatus(d->manager_->store_health().Writable());
  spdlog::info("gpuprobed {} listening on {}:{} ({}, {})", GPUPROBE_VERSION, options.listen_host,
               port, options.tls_cert_file.empty() ? "plaintext" : "tls",
               tokens_on ? "tokens required" : "no tokens");
  if (options.http) {
    ASSIGN_OR_RETURN(const int bound, d->http_->Start(options.http_host, options.http_port));
    spdlog::info("http listening on {}:{} (plaintext{})", options.http_host, bound,
                 options.tls_cert_file.empty() ? "" : ", beside TLS on gRPC");
  }
  // Under systemd (Type=notify): ready now that the device workers answered and both listeners
  // are up.
  NotifyServiceManager("READY=1");
  d->ready_ = true;
  return d;
}

Daemon::~Daemon() { Stop(); }

void Daemon::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (ready_) NotifyServiceManager("STOPPING=1");
  if (manager_ != nullptr) manager_->store_health().OnChange(nullptr);
  if (server_ != nullptr) server_->GetHealthCheckService()->SetServingStatus(false);
  if (http_ != nullptr) http_->Stop();
  if (manager_ != nullptr) manager_->Stop();  // interrupts the running job; it runs again later
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  }
}

}  // namespace gpuprobe
