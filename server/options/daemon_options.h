// gpuprobed's command line as one value: every flag parsed, defaults filled in and every value
// checked (INVALID_ARGUMENT names the flag and its limit), before the daemon touches a file, a
// device or the network. main.cc acts on the result; the worker child reads the same flags.
//
//   absl::StatusOr<DaemonOptions> options = ParseDaemonOptions(argc, argv);
//   if (!options.ok()) { spdlog::error("{}", options.status().ToString()); return 2; }
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/jobs/job_manager.h"

namespace gpuprobe {

struct DaemonOptions {
  std::string listen;       // HOST:PORT as given
  std::string listen_host;  // its HOST
  std::string backend;
  std::string data_dir;  // --data-dir, else $XDG_STATE_HOME/gpuprobed, else ~/.local/state/...
  std::string store;     // --store as given; empty: SQLite in data_dir
  bool http = false;     // whether to serve the JSON API, /metrics and the page (--http not empty)
  std::string http_host;
  int http_port = 0;
  std::string web_root;  // --web-root; empty: the installed page beside the daemon's bin/
  std::string tokens_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  int max_message_bytes = 0;
  int64_t max_store_bytes = 0;
  std::string log_level;
  std::string isolation;                    // "process" or "none"
  std::optional<std::vector<int>> devices;  // nullopt: every visible device
  int cpu_repeat = 1;
  int64_t inject_delay_ns = 0;              // testing only: a wait inside every timed sample
  std::vector<std::string> probe_commands;  // --probe-command NAME=PATH, in order
  std::string probe_commands_file;          // --probe-commands
  QueueLimits limits;
  FleetOptions fleet;  // host filled in: --host-name, else the machine's
  // Internal: the device worker child's socket (-1: this is the daemon) and its device.
  int worker_fd = -1;
  int device = 0;

  // The flags that start a device worker child with the same backend, logging and probes.
  std::vector<std::string> WorkerArguments(int worker_device) const;
};

// Parses argv (dashes or underscores in flag names; --probe-command may repeat). Exit-worthy
// problems come back as INVALID_ARGUMENT naming the flag; --help prints and exits, as Abseil's.
absl::StatusOr<DaemonOptions> ParseDaemonOptions(int argc, char** argv);

}  // namespace gpuprobe
