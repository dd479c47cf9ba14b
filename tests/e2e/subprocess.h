// Runs the project's binaries as child processes for end-to-end tests: output goes to files
// (never a pipe that could fill and stall the child), and every wait has a deadline.
//
//   ASSIGN_OR_RETURN(CommandResult r, RunCommand({"gpuprobe", "info"}, {}, dir));
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace gpuprobe::testing_support {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Environment additions are NAME=VALUE strings on top of the test's own environment.
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env_additions,
                                         const std::string& work_dir,
                                         absl::Duration timeout = absl::Seconds(120));

// A long-running child (the daemon) whose stdout and stderr go to `log_path`.
class ChildProcess {
 public:
  static absl::StatusOr<ChildProcess> Start(const std::vector<std::string>& argv,
                                            const std::string& log_path,
                                            const std::vector<std::string>& env_additions = {});
  ChildProcess(ChildProcess&& other) noexcept
      : pid_(std::exchange(other.pid_, -1)), log_path_(std::move(other.log_path_)) {}
  ~ChildProcess();  // SIGKILLs a child still running

  // Waits until the log holds `needle`; returns the word that follows it (up to a space or
  // the end of the line).
  absl::StatusOr<std::string> AwaitLog(const std::string& needle, absl::Duration timeout);
  // A gpuprobed child's gRPC and HTTP addresses ("127.0.0.1:PORT"), once it logs that it
  // listens on them.
  absl::StatusOr<std::string> GrpcAddress(absl::Duration timeout = absl::Seconds(20));
  absl::StatusOr<std::string> HttpAddress(absl::Duration timeout = absl::Seconds(5));
  // Sends `signal` and returns the exit code (128 + signal if it died of one).
  absl::StatusOr<int> StopWith(int signal, absl::Duration timeout);
  std::string Log() const;

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  pid_t pid_;
  std::string log_path_;
};

}  // namespace gpuprobe::testing_support
