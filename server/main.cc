// gpuprobed: the daemon that owns a host's GPUs and serialises every probe job (server/daemon).
#include <malloc.h>

#include <csignal>
#include <cstring>
#include <memory>

#include "server/daemon/daemon.h"
#include "server/daemon/device_executors.h"
#include "server/daemon/usage.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

int main(int argc, char** argv) {
  // Logs are for people and go to stderr, as a daemon's should; stdout stays free for output.
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  gpuprobe::ConfigureDaemonUsage();
  absl::StatusOr<gpuprobe::DaemonOptions> options = gpuprobe::ParseDaemonOptions(argc, argv);
  if (!options.ok()) {
    spdlog::error("{}", options.status().ToString());
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(options->log_level));
  if (options->worker_fd >= 0) return gpuprobe::ServeAsWorker(*options);

  // SIGINT and SIGTERM blocked in every thread (threads inherit the mask), so that only the
  // sigwait below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // Blocks of 1 MiB and more (a page of jobs' body, a job's rows) are mapped for themselves and
  // returned when freed: with glibc's threshold, which rises to 32 MiB as such blocks are freed,
  // each HTTP worker's arena kept the largest page it had built (issue 55, item 11).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  absl::StatusOr<std::unique_ptr<gpuprobe::Daemon>> daemon = gpuprobe::Daemon::Start(*options);
  if (!daemon.ok()) {
    spdlog::error("{}", daemon.status().ToString());
    return 2;
  }
  int signal = 0;
  sigwait(&signals, &signal);
  spdlog::info("received {}, shutting down", strsignal(signal));
  (*daemon)->Stop();
  spdlog::info("stopped");
  return 0;
}
