// Runs an operator's executable as a probe job: no shell, stdin /dev/null, in a process group of
// its own, with its time, output bytes and stdout lines bounded. A run that is cancelled or
// breaks a bound is stopped: SIGTERM to its whole process group, SIGKILL after a grace period.
// When it exits, whatever it left running (its group, and what left the group: see
// command_descendants.h) is killed and named, and the run ends once they are gone.
//
//   ASSIGN_OR_RETURN(CommandOutput out, RunBoundedCommand({"/opt/probe", "--t", "6"},
//                                                         {{"CUDA_VISIBLE_DEVICES", "0"}},
//                                                         limits, cancelled, on_tick));
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace gpuprobe {

struct CommandLimits {
  absl::Duration max_time = absl::Seconds(600);
  int64_t max_output_bytes = int64_t{16} << 20;  // stdout and stderr together
  int64_t max_lines = 100000;                    // of stdout
  absl::Duration term_grace = absl::Seconds(2);  // SIGTERM to SIGKILL
};

struct CommandOutput {
  std::string out, err;
  int exit_code = 0;   // 128 + the signal for a run that died of one
  std::set<int> pids;  // the command's and those it left behind, all gone by now
};

// `on_started` hears the run's process group as soon as it exists; `on_tick` is called about
// once a second while it runs (telemetry). Errors: DEADLINE_EXCEEDED past max_time,
// RESOURCE_EXHAUSTED past an output bound, CANCELLED once `cancelled`, FAILED_PRECONDITION when
// it left processes running behind it (killed), each with what happened and `partial` (if not
// null) holding what it printed; another error when it could not be started.
absl::StatusOr<CommandOutput> RunBoundedCommand(const std::vector<std::string>& argv,
                                                const std::map<std::string, std::string>& env,
                                                const CommandLimits& limits,
                                                const std::atomic<bool>& cancelled,
                                                const std::function<void(int group)>& on_started,
                                                const std::function<void()>& on_tick,
                                                CommandOutput* partial = nullptr);

}  // namespace gpuprobe
