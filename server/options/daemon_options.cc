#include "server/options/daemon_options.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/flag_names.h"
#include "common/host_port.h"
#include "common/identifiers.h"
#include "common/status_macros.h"

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
ABSL_FLAG(std::string, web_root, "",
          "the directory of the dashboard page's files (index.html, app.js); default: "
          "share/gpuprobe/web beside the daemon's bin/, where cmake --install puts them");
ABSL_FLAG(bool, http_plaintext, false,
          "serve --http in plaintext beside --tls-cert on an address other than loopback, where "
          "bearer tokens cross the network in clear");
ABSL_FLAG(std::string, tokens, "",
          "file of \"TOKEN ROLE NAME\" lines (roles read, submit, admin); empty: no tokens, "
          "every caller is admin");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain: serve TLS (with --tls-key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert");
ABSL_FLAG(int, max_message_bytes, 4 << 20, "largest request message accepted, bytes");
ABSL_FLAG(double, max_job_seconds, gpuprobe::QueueLimits{}.max_job_seconds,
          "largest estimated device time of one job, seconds");
ABSL_FLAG(std::string, log_level, "info", "trace, debug, info, warn, error, critical or off");
ABSL_FLAG(std::string, isolation, "process",
          "process: the backend runs in a worker child process, so a crash or a sticky CUDA "
          "error fails one job and the worker is restarted; none: in the daemon");
ABSL_FLAG(std::string, devices, "all",
          "devices to serve, each with its own queue and worker: all, or indices like 0,1 "
          "(the cpu backend is device 0)");
ABSL_FLAG(int64_t, max_artifact_bytes, gpuprobe::QueueLimits{}.max_artifact_bytes,
          "all jobs' artifacts (check --dump) together, bytes; the oldest jobs' are removed to "
          "make room, and a check whose dump alone is larger is refused");
ABSL_FLAG(bool, client_kernels, gpuprobe::QueueLimits{}.client_kernels,
          "whether clients may bring GPU code: upload modules for the kernel probe (with a tokens "
          "file, only callers of the kernel or admin role may); off with --isolation=none");
ABSL_FLAG(int64_t, max_module_bytes, gpuprobe::QueueLimits{}.max_module_bytes,
          "largest module (cubin, fatbin or PTX) a client may upload, bytes");
ABSL_FLAG(int64_t, module_quota_bytes, gpuprobe::ModuleQuota{}.store_bytes,
          "all stored modules together, bytes; modules no queued or running job names are aged "
          "out, least recently used first, to make room");
ABSL_FLAG(int64_t, client_module_quota_bytes, gpuprobe::ModuleQuota{}.client_bytes,
          "the modules one client (a token's name, or an address without tokens) may keep "
          "stored, bytes");
ABSL_FLAG(int64_t, max_store_bytes, 0,
          "largest size of the job store's database file, bytes; writes past it fail as on a full "
          "disk; 0: no bound but the disk's");
ABSL_FLAG(double, min_watchdog_seconds, absl::ToDoubleSeconds(gpuprobe::QueueLimits{}.min_watchdog),
          "a device worker silent for this long plus 10x the job's estimated device time is "
          "killed and its job failed");
ABSL_FLAG(int, cpu_repeat, 1,
          "cpu backend: run each timed kernel this many times per launch (a known slowdown for "
          "testing CI gates; rows say so); 1: as measured");
ABSL_FLAG(int64_t, inject_delay_ns, 0,
          "testing only: put a wait of this many nanoseconds inside every timed sample, either "
          "backend (a known slowdown for testing CI gates; the device's description, on every job "
          "and row, says so); 0: none");
ABSL_FLAG(std::string, store, "",
          "the job store: sqlite:///ABS/PATH/jobs.db (this daemon alone) or "
          "postgresql://USER@HOST:PORT/DB (shared by a fleet of daemons); default: "
          "$GPUPROBE_STORE (which keeps a password out of the process list; libpq's PGPASSWORD "
          "and PGPASSFILE work too), else SQLite at DATA_DIR/gpuprobe.sqlite");
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

namespace gpuprobe {
namespace {

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

// 1 ms: far beyond a "known small slowdown", short of stalling a worker's watchdog.
constexpr int64_t kMaxInjectDelayNs = 1'000'000;

std::string DefaultDataDir() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state != '\0') {
    return std::string(state) + "/gpuprobed";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.local/state/gpuprobed";
}

std::string MachineHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// HOST:PORT with a port in 0..65535.
// A listener's address; port 0: any free port (the daemon logs the one it got).
absl::Status SplitAddress(const char* flag, const std::string& address, std::string& host,
                          int& port) {
  ASSIGN_OR_RETURN(HostPort parsed, ParseHostPort(flag, address, 0));
  host = parsed.host;
  port = parsed.port;
  return absl::OkStatus();
}

// Whether `host` (as --http gives it) is this machine's loopback, which no other machine reaches.
bool IsLoopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "[::1]";
}

// --devices: "all" (nullopt) or the listed indices.
absl::StatusOr<std::optional<std::vector<int>>> Devices(const std::string& text) {
  if (text == "all") return std::nullopt;
  std::vector<int> devices;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int index = 0;
    if (!absl::SimpleAtoi(part, &index) || index < 0) {
      return Invalid(absl::StrCat("devices: \"", text, "\" is neither all nor a list like 0,1"));
    }
    devices.push_back(index);
  }
  return devices;
}

// The parsed flags, each within its range.
absl::StatusOr<DaemonOptions> FromFlags(std::vector<std::string> probe_commands) {
  DaemonOptions o;
  o.limits.max_queued_jobs = absl::GetFlag(FLAGS_max_queued_jobs);
  if (o.limits.max_queued_jobs < 1) {
    return Invalid(absl::StrFormat("max-queued-jobs: %d; at least 1", o.limits.max_queued_jobs));
  }
  o.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  if (o.max_message_bytes < 4096) {
    return Invalid(absl::StrFormat("max-message-bytes: %d; at least 4096", o.max_message_bytes));
  }
  o.limits.max_job_seconds = absl::GetFlag(FLAGS_max_job_seconds);
  if (!(o.limits.max_job_seconds > 0)) return Invalid("max-job-seconds: must be positive");
  o.limits.max_artifact_bytes = absl::GetFlag(FLAGS_max_artifact_bytes);
  o.max_store_bytes = absl::GetFlag(FLAGS_max_store_bytes);
  if (o.limits.max_artifact_bytes < 0 || o.max_store_bytes < 0) {
    return Invalid("max-artifact-bytes, max-store-bytes: must not be negative");
  }
  o.limits.client_kernels = absl::GetFlag(FLAGS_client_kernels);
  o.limits.max_module_bytes = absl::GetFlag(FLAGS_max_module_bytes);
  o.limits.module_quota = {.store_bytes = absl::GetFlag(FLAGS_module_quota_bytes),
                           .client_bytes = absl::GetFlag(FLAGS_client_module_quota_bytes)};
  if (o.limits.max_module_bytes < 1 || o.limits.module_quota.store_bytes < 1 ||
      o.limits.module_quota.client_bytes < 1) {
    return Invalid(
        "max-module-bytes, module-quota-bytes, client-module-quota-bytes: must be "
        "positive");
  }
  o.cpu_repeat = absl::GetFlag(FLAGS_cpu_repeat);
  if (o.cpu_repeat < 1 || o.cpu_repeat > 100) {
    return Invalid(absl::StrFormat("cpu-repeat: %d is outside [1, 100]", o.cpu_repeat));
  }
  o.inject_delay_ns = absl::GetFlag(FLAGS_inject_delay_ns);
  if (o.inject_delay_ns < 0 || o.inject_delay_ns > kMaxInjectDelayNs) {
    return Invalid(absl::StrFormat("inject-delay-ns: %d is outside [0, %d]", o.inject_delay_ns,
                                   kMaxInjectDelayNs));
  }
  const double watchdog = absl::GetFlag(FLAGS_min_watchdog_seconds);
  if (!(watchdog > 0)) return Invalid("min-watchdog-seconds: must be positive");
  o.limits.min_watchdog = absl::Seconds(watchdog);
  const double lease = absl::GetFlag(FLAGS_lease_seconds);
  if (!(lease >= 1) || lease > 3600) {
    return Invalid(absl::StrFormat("lease-seconds: %g is outside [1, 3600]", lease));
  }
  // A heartbeat every tenth of the lease, at most every 5 s.
  o.fleet.lease = absl::Seconds(lease);
  o.fleet.heartbeat = std::min(absl::Seconds(5), o.fleet.lease / 10);
  o.fleet.host = absl::GetFlag(FLAGS_host_name);
  RETURN_IF_ERROR(CheckHostName("host-name", o.fleet.host));
  if (o.fleet.host.empty()) o.fleet.host = MachineHostName();

  o.listen = absl::GetFlag(FLAGS_listen);
  int listen_port = 0;
  RETURN_IF_ERROR(SplitAddress("listen", o.listen, o.listen_host, listen_port));
  if (const std::string http = absl::GetFlag(FLAGS_http); !http.empty()) {
    o.http = true;
    RETURN_IF_ERROR(SplitAddress("http", http, o.http_host, o.http_port));
  }
  o.isolation = absl::GetFlag(FLAGS_isolation);
  if (o.isolation != "process" && o.isolation != "none") {
    return Invalid(absl::StrCat("isolation: \"", o.isolation, "\" is not process or none"));
  }
  // A client's GPU code runs only in a worker process of its own, never in gpuprobed.
  if (o.isolation == "none") o.limits.client_kernels = false;
  ASSIGN_OR_RETURN(o.devices, Devices(absl::GetFlag(FLAGS_devices)));

  o.backend = absl::GetFlag(FLAGS_backend);
  o.data_dir = absl::GetFlag(FLAGS_data_dir);
  if (o.data_dir.empty()) o.data_dir = DefaultDataDir();
  o.store = absl::GetFlag(FLAGS_store);
  if (const char* env = std::getenv("GPUPROBE_STORE"); o.store.empty() && env != nullptr) {
    o.store = env;
  }
  o.tokens_file = absl::GetFlag(FLAGS_tokens);
  o.web_root = absl::GetFlag(FLAGS_web_root);
  o.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  o.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  if (!o.tls_cert_file.empty() && o.http && !IsLoopback(o.http_host) &&
      !absl::GetFlag(FLAGS_http_plaintext)) {
    return Invalid(absl::StrCat(
        "http: ", o.http_host,
        " is not loopback, and the HTTP API is plaintext: beside "
        "--tls-cert its bearer tokens would cross the network in clear; bind --http to "
        "127.0.0.1, turn it off with --http=, or accept this with --http-plaintext"));
  }
  o.log_level = absl::GetFlag(FLAGS_log_level);
  if (o.log_level != "trace" && o.log_level != "debug" && o.log_level != "info" &&
      o.log_level != "warn" && o.log_level != "error" && o.log_level != "critical" &&
      o.log_level != "off") {
    return Invalid(absl::StrCat("log-level: \"", o.log_level,
                                "\" is not trace, debug, info, warn, error, critical or off"));
  }
  o.probe_commands = std::move(probe_commands);
  o.probe_commands_file = absl::GetFlag(FLAGS_probe_commands);
  o.worker_fd = absl::GetFlag(FLAGS_worker_fd);
  o.device = absl::GetFlag(FLAGS_device);
  return o;
}

}  // namespace

std::vector<std::string> DaemonOptions::WorkerArguments(int worker_device) const {
  std::vector<std::string> args = {"--backend=" + backend,
                                   absl::StrCat("--device=", worker_device),
                                   absl::StrCat("--cpu_repeat=", cpu_repeat),
                                   absl::StrCat("--inject_delay_ns=", inject_delay_ns),
                                   "--log_level=" + log_level,
                                   "--probe_commands=" + probe_commands_file};
  for (const std::string& command : probe_commands) args.push_back("--probe_command=" + command);
  return args;
}

absl::StatusOr<DaemonOptions> ParseDaemonOptions(int argc, char** argv) {
  std::vector<std::string> storage;
  std::vector<char*> args = DashesToUnderscores(argc, argv, storage);
  // --probe-command NAME=PATH, as often as it is given (taken out before the flags are parsed).
  std::vector<std::string> probe_commands = TakeRepeatedFlag(args, "probe_command");
  RETURN_IF_ERROR(CheckFlagArguments(args));
  // `--store "$store"` with an unset variable must not fall back to SQLite unnoticed.
  std::vector<char*> scanned = args;
  for (const std::string& store : TakeRepeatedFlag(scanned, "store")) {
    if (store.empty()) {
      return Invalid(
          "store: given but empty (an unset variable?); leave --store out for SQLite in "
          "--data-dir");
    }
  }
  absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  return FromFlags(std::move(probe_commands));
}

}  // namespace gpuprobe
