// gpuprobed as a library (Envoy's MainCommon): Start takes the daemon's options and brings up
// everything a serving daemon holds, in order, refusing at the first thing that cannot be had:
// the data directory's lock (one daemon per directory, and per SQLite store's directory), the
// probes, a worker per device, the job store, the job manager, the gRPC service (with health and
// reflection) and the HTTP API; then it tells systemd it is ready. Stop ends it: health says
// not serving, the listeners close, the running job is interrupted (it runs again at the next
// start).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Daemon> daemon, Daemon::Start(options));
//   WaitForShutdownSignal(signals);
//   daemon->Stop();
#pragma once

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "grpcpp/server.h"
#include "server/api/probe_service.h"
#include "server/api/reflection_v1.h"
#include "server/jobs/data_dir_lock.h"
#include "server/jobs/job_manager.h"
#include "server/options/daemon_options.h"
#include "server/web/http_api.h"

namespace gpuprobe {

class Daemon {
 public:
  // The first error, naming the flag it concerns where one does.
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(const DaemonOptions& options);

  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;
  ~Daemon();  // Stop()

  // Idempotent; also what a Start that failed part-way does with what it had made.
  void Stop();

 private:
  Daemon() = default;

  // Members in the order Start makes them; they go in the reverse order.
  std::optional<DataDirLock> data_dir_lock_;
  std::optional<DataDirLock> store_dir_lock_;
  std::unique_ptr<JobManager> manager_;
  std::unique_ptr<HttpApi> http_;
  std::unique_ptr<ProbeService> service_;
  std::unique_ptr<ReflectionV1> reflection_v1_;
  std::unique_ptr<grpc::Server> server_;
  bool ready_ = false;  // told systemd READY=1
  bool stopped_ = false;
};

}  // namespace gpuprobe
