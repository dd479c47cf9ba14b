// Every process a command run starts, found and killed when the run ends (issue 55, item 2): a
// command that starts a new session (setsid, a daemon's double fork) leaves its process group,
// so the group alone misses it. The process that runs commands is a child subreaper, so orphans
// of a command come back to it instead of going to init; each run's processes carry the run's
// token in their environment (GPUPROBE_COMMAND_RUN), inherited across fork, exec and setsid.
// A run's processes are those of the command's tree, the holders of its token, and the orphans
// that came back to this process during the run.
//
//   CommandRun run = CommandRun::Begin();           // before the fork
//   env[kCommandRunVariable] = run.token();
//   ... fork, exec, wait for the command ...
//   std::set<int> killed = run.KillLeftBehind(pid);  // after its exit (or a stop)
#pragma once

#include <set>
#include <string>

#include "absl/time/time.h"

namespace gpuprobe {

inline constexpr char kCommandRunVariable[] = "GPUPROBE_COMMAND_RUN";

class CommandRun {
 public:
  // A new run's token (this process's pid, a counter and random bits), this process made a child
  // subreaper, and the processes of runs whose owner died (a killed worker or daemon) killed
  // first, so that a new run never shares the device with an old one's.
  static CommandRun Begin();

  const std::string& token() const { return token_; }

  // Records the command's pid (never reaped by another run's sweep).
  void Started(int pid);

  // Kills every process of the run but `pid` itself (the command, which its runner reaps), waits
  // until each is gone (at most `wait`) and reaps those that came back to this process. Returns
  // their pids.
  std::set<int> KillLeftBehind(int pid, absl::Duration wait = absl::Seconds(5));

  // Ends the run: its command's pid is no longer protected.
  ~CommandRun();
  CommandRun(const CommandRun&) = delete;
  CommandRun& operator=(const CommandRun&) = delete;

 private:
  CommandRun(std::string token, std::set<int> children_before)
      : token_(std::move(token)), children_before_(std::move(children_before)) {}

  std::string token_;
  std::set<int> children_before_;  // this process's children when the run began
  int pid_ = 0;
};

// Processes of process group `group` that are alive (not zombies), from /proc.
int LiveProcessesOfGroup(int group);

// The runs' tokens are "PID-N-RANDOM": the processes of runs whose PID is gone, killed. Returns
// how many were.
int KillOrphanedRuns();

}  // namespace gpuprobe
